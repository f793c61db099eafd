import { useEffect, useRef, useState, type KeyboardEvent, type PointerEvent } from 'react';
import { exitLabel, exitRow, headerHeight, layout, nodeHeight, nodeWidth, typeLabel, type RecipeSpec } from './model';

interface GraphProps {
  readonly spec: RecipeSpec;
  readonly selected: string | undefined;
  readonly onSelect: (id: string) => void;
  /** Block ids the API reported issues for. */
  readonly invalid: ReadonlySet<string>;
}

const minZoom = 0.25;
const maxZoom = 2;
const clampZoom = (z: number): number => Math.min(maxZoom, Math.max(minZoom, Math.round(z * 100) / 100));

/**
 * The recipe as a graph: one box per block with its exits as ports on the right, a curve from each
 * connected exit to the block it leads to. Boxes are buttons (Tab, Enter or Space selects one), and
 * each names its exits and targets, so the graph reads the same without seeing it.
 *
 * The graph sits in a scroll box with scrollbars always shown, pans by dragging its background,
 * and zooms (buttons, Ctrl + wheel); it opens zoomed to fit its box's width (not below 60%, so
 * text stays legible; past that the box scrolls), and "Fit" shows all of it whatever the size.
 */
export function RecipeGraph({ spec, selected, onSelect, invalid }: GraphProps) {
  const box = useRef<HTMLDivElement>(null);
  const [zoom, setZoom] = useState<number>();
  const drag = useRef<{ x: number; y: number; left: number; top: number } | undefined>(undefined);
  const boxes = layout(spec);
  const byId = new Map(boxes.map((b) => [b.id, b]));
  const blockType = new Map(spec.blocks.map((b) => [b.id, b.type]));
  const connections = spec.connections ?? [];
  const width = Math.max(...boxes.map((b) => b.x + nodeWidth), 200) + 40;
  const height = Math.max(...boxes.map((b) => b.y + nodeHeight(b.exits.length)), 100) + 20;
  const fit = (floor: number): number => {
    const el = box.current;
    if (!el) return 1;
    const byWidth = (el.clientWidth - 4) / width;
    const byHeight = floor === minZoom ? (el.clientHeight - 4) / height : Infinity;
    return clampZoom(Math.max(floor, Math.min(1, byWidth, byHeight)));
  };
  // First layout: fit the width once the box has a size; later edits keep the user's zoom.
  useEffect(() => {
    if (zoom === undefined) setZoom(fit(0.6));
  });
  const scale = zoom ?? 1;
  const pan = {
    onPointerDown: (event: PointerEvent<HTMLDivElement>) => {
      // Only the background pans: a block takes its own clicks and focus.
      if ((event.target as Element).closest('.node') || !box.current || event.button !== 0) return;
      drag.current = { x: event.clientX, y: event.clientY, left: box.current.scrollLeft, top: box.current.scrollTop };
      event.currentTarget.setPointerCapture(event.pointerId);
    },
    onPointerMove: (event: PointerEvent<HTMLDivElement>) => {
      const from = drag.current;
      if (!from || !box.current) return;
      box.current.scrollLeft = from.left - (event.clientX - from.x);
      box.current.scrollTop = from.top - (event.clientY - from.y);
    },
    onPointerUp: () => {
      drag.current = undefined;
    },
  };
  useEffect(() => {
    const el = box.current;
    if (!el) return undefined;
    const wheel = (event: WheelEvent) => {
      if (!event.ctrlKey) return;
      event.preventDefault();
      setZoom((z) => clampZoom((z ?? 1) * (event.deltaY < 0 ? 1.1 : 1 / 1.1)));
    };
    el.addEventListener('wheel', wheel, { passive: false });
    return () => el.removeEventListener('wheel', wheel);
  }, []);
  const target = (from: string, exit: string): string | undefined => connections.find((c) => c.from === from && c.exit === exit)?.to;
  const keyed = (id: string) => (event: KeyboardEvent) => {
    if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      onSelect(id);
    }
  };

  return (
    <div className="graph-wrap">
      <div className="row graph-tools" role="toolbar" aria-label="Graph view">
        <button type="button" onClick={() => setZoom(clampZoom(scale / 1.25))} disabled={scale <= minZoom} aria-label="Zoom out">
          −
        </button>
        <span className="muted" aria-live="polite" data-testid="zoom">
          {Math.round(scale * 100)}%
        </span>
        <button type="button" onClick={() => setZoom(clampZoom(scale * 1.25))} disabled={scale >= maxZoom} aria-label="Zoom in">
          +
        </button>
        <button type="button" onClick={() => setZoom(fit(minZoom))}>
          Fit
        </button>
        <button type="button" onClick={() => setZoom(1)}>
          100%
        </button>
        <small className="muted">Drag the background to pan</small>
      </div>
    <div className="graph-scroll" ref={box} {...pan} tabIndex={-1}>
      <svg className="graph" width={Math.ceil(width * scale)} height={Math.ceil(height * scale)} viewBox={`0 0 ${width} ${height}`} role="group" aria-label={`Blocks of recipe ${spec.name}`}>
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto">
            <path d="M0,0 L10,5 L0,10 z" className="edge-head" />
          </marker>
        </defs>
        {boxes.flatMap((box) =>
          box.exits.map((exit, i) => {
            const to = target(box.id, exit);
            const dest = to ? byId.get(to) : undefined;
            if (!dest) return null;
            const x1 = box.x + nodeWidth;
            const y1 = box.y + headerHeight + i * exitRow + exitRow / 2;
            const x2 = dest.x;
            const y2 = dest.y + headerHeight / 2;
            const bend = Math.max(40, Math.abs(x2 - x1) / 2);
            return <path key={`${box.id}:${exit}`} className="edge" d={`M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2},${y2}`} markerEnd="url(#arrow)" />;
          }),
        )}
        {boxes.map((box) => {
          const type = typeLabel(blockType.get(box.id) ?? '');
          const exitsText = box.exits.map((e) => `${exitLabel(e)} to ${target(box.id, e) ?? 'nothing'}`).join(', ');
          const classes = ['node', selected === box.id ? 'selected' : '', invalid.has(box.id) ? 'invalid' : '', spec.startBlockId === box.id ? 'start' : ''].join(' ');
          return (
            <g
              key={box.id}
              className={classes}
              transform={`translate(${box.x},${box.y})`}
              role="button"
              tabIndex={0}
              aria-pressed={selected === box.id}
              // Starts with the words the box shows (id, type, exits), so the name a voice user says is the one it has;
              // each drawn text ends in a space so the words stay apart when read as one text.
              aria-label={`${spec.startBlockId === box.id ? 'Start block' : 'Block'} ${box.id} ${type} ${box.exits.length > 0 ? box.exits.map(exitLabel).join(' ') : 'ends the call'}${invalid.has(box.id) ? ', has errors' : ''}. Exits: ${exitsText || 'none (ends the call)'}`}
              data-block={box.id}
              onClick={() => onSelect(box.id)}
              onKeyDown={keyed(box.id)}
            >
              <rect width={nodeWidth} height={nodeHeight(box.exits.length)} rx="8" />
              <text x="10" y="19" className="node-id">
                {spec.startBlockId === box.id ? '▶ ' : ''}
                {box.id}{' '}
              </text>
              <text x="10" y="36" className="node-type">
                {type}{' '}
              </text>
              {box.exits.map((exit, i) => (
                <g key={exit} transform={`translate(0,${headerHeight + i * exitRow})`}>
                  <text x={nodeWidth - 14} y="16" textAnchor="end" className="node-exit">
                    {exitLabel(exit)}{' '}
                  </text>
                  <circle cx={nodeWidth} cy={exitRow / 2} r="5" className={target(box.id, exit) ? 'port connected' : 'port'} />
                </g>
              ))}
              {box.exits.length === 0 ? (
                <text x="10" y={headerHeight + 16} className="node-exit">
                  ends the call{' '}
                </text>
              ) : null}
            </g>
          );
        })}
      </svg>
    </div>
    </div>
  );
}
