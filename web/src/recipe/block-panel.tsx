import { useEffect, useState } from 'react';
import type { ApiIssue } from '../api/client';
import { SelectField, TextArea, issueAt } from '../components/field';
import { BlockFields } from './block-fields';
import { exitLabel, exitsOf, settingsOf, typeLabel, type Block, type RecipeSpec, type Settings } from './model';

interface PanelProps {
  readonly spec: RecipeSpec;
  readonly block: Block;
  /** Issues under `blocks[<index>]` (paths relative to the block). */
  readonly issues: readonly ApiIssue[];
  readonly onSettings: (settings: Settings) => void;
  readonly onConnect: (exit: string, to: string | undefined) => void;
  readonly onStart: () => void;
  readonly onDelete: () => void;
}

const settingsIssues = (issues: readonly ApiIssue[]): ApiIssue[] =>
  issues.flatMap((i) => (i.path === 'settings' ? [{ path: '', message: i.message }] : i.path.startsWith('settings.') ? [{ path: i.path.slice(9), message: i.message }] : []));

/** The selected block: its settings (fields and JSON), where each exit leads, start and delete. */
export function BlockPanel({ spec, block, issues, onSettings, onConnect, onStart, onDelete }: PanelProps) {
  const settings = settingsOf(block);
  const [json, setJson] = useState(() => JSON.stringify(settings, null, 2));
  const [jsonError, setJsonError] = useState<string>();
  // The JSON view follows edits made in the fields (and a newly selected block).
  useEffect(() => {
    setJson(JSON.stringify(settingsOf(block), null, 2));
    setJsonError(undefined);
  }, [block]);
  const own = settingsIssues(issues);
  const exits = exitsOf(block.type, settings);
  const others = spec.blocks.filter((b) => b.id !== block.id);
  const target = (exit: string): string => (spec.connections ?? []).find((c) => c.from === block.id && c.exit === exit)?.to ?? '';
  const exitIssue = (exit: string): string | undefined => issueAt(issues, `exits.${exit}`);

  return (
    <section className="panel" aria-labelledby="block-title">
      <h2 id="block-title">
        {typeLabel(block.type)} block <code>{block.id}</code>
      </h2>
      {issueAt(issues, 'id') ? <p className="issue">{issueAt(issues, 'id')}</p> : null}
      <BlockFields type={block.type} settings={settings} issues={own} onChange={onSettings} />
      <details>
        <summary>All settings (JSON)</summary>
        <TextArea
          label={`Settings of ${block.id} as JSON`}
          rows={10}
          spellCheck={false}
          value={json}
          issue={jsonError}
          onChange={(e) => setJson(e.target.value)}
          onBlur={() => {
            try {
              const parsed: unknown = JSON.parse(json);
              if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('settings must be a JSON object');
              setJsonError(undefined);
              onSettings(parsed as Settings);
            } catch (error) {
              setJsonError(`Not applied: ${(error as Error).message}`);
            }
          }}
        />
      </details>
      <fieldset>
        <legend>Exits</legend>
        {exits.length === 0 ? <p className="muted">A {typeLabel(block.type)} block ends the call.</p> : null}
        {exits.map((exit) => (
          <SelectField
            key={exit}
            label={`${exitLabel(exit)} leads to`}
            value={target(exit)}
            issue={exitIssue(exit)}
            options={[['', '— not connected —'] as const, ...others.map((b) => [b.id, `${b.id} (${typeLabel(b.type)})`] as const)]}
            onChange={(e) => onConnect(exit, e.target.value || undefined)}
          />
        ))}
      </fieldset>
      <div className="row">
        <button type="button" onClick={onStart} disabled={spec.startBlockId === block.id}>
          {spec.startBlockId === block.id ? 'Start block' : 'Make start block'}
        </button>
        <button type="button" className="danger" onClick={onDelete}>
          Delete block
        </button>
      </div>
    </section>
  );
}
