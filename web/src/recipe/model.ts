// Types only, from the generated file, so test/web/recipe-model.test.ts can hold this model against
// the server's under the repository's own TypeScript settings.
import type { components } from '../api/management.js';

export type RecipeSpec = components['schemas']['RecipeSpec'];
export type Block = RecipeSpec['blocks'][number];
export type BlockType = Block['type'];
export type Connection = NonNullable<RecipeSpec['connections']>[number];
/** Settings edited generically (typed fields and the JSON view both write this object). */
export type Settings = Record<string, unknown>;

export const blockTypes: ReadonlyArray<readonly [BlockType, string]> = [
  ['message', 'Message'],
  ['smartAi', 'SmartAI'],
  ['ask', 'Ask'],
  ['condition', 'Condition'],
  ['code', 'Code'],
  ['api', 'API'],
  ['webhook', 'Webhook'],
  ['transfer', 'Transfer'],
  ['close', 'Close'],
];
export const typeLabel = (type: string): string => blockTypes.find(([t]) => t === type)?.[1] ?? type;

const names = (list: unknown): string[] =>
  Array.isArray(list) ? list.flatMap((x: unknown) => {
    const name: unknown = typeof x === 'object' && x !== null ? Reflect.get(x, 'name') : undefined;
    return typeof name === 'string' ? [name] : [];
  }) : [];

/**
 * The exits a block leaves by, in the builder's order. Mirrors exitsOf() of
 * control-api/model/recipes/recipe-graph.ts (test/web/recipe-model.test.ts holds them equal): the
 * runtime routes on these names.
 */
export function exitsOf(type: string, settings: Settings): string[] {
  switch (type) {
    case 'message':
    case 'webhook':
      return ['next'];
    case 'smartAi':
      return [...names(settings.intents), 'fallback'];
    case 'ask':
      return ['next', ...names(settings.intents), 'fallback'];
    case 'condition':
      return [...names(settings.branches), 'else'];
    case 'code':
      return ['ifSuccess', 'ifFails'];
    case 'api':
      return ['success', 'failure'];
    case 'transfer':
      return ['failed'];
    default:
      return [];
  }
}

export const exitLabel = (exit: string): string =>
  ({ fallback: 'Fallback', ifFails: 'If Fails', ifSuccess: 'If Success', else: 'Else', next: 'Next', success: 'Success', failure: 'Failure', failed: 'Failed' })[exit] ?? exit;

/** Settings a new block starts with: the least the API accepts for its type. */
export function defaultSettings(type: BlockType): Settings {
  switch (type) {
    case 'message':
      return { text: 'Hello!' };
    case 'smartAi':
      return { prompt: 'Help the caller.' };
    case 'ask':
      return { prompt: 'Ask for the information.', variables: [{ name: 'answer', type: 'text', description: '' }] };
    case 'condition':
      return { branches: [{ name: 'matched', rules: [{ variable: 'answer', operator: 'isNotEmpty' }] }] };
    case 'code':
      return { source: 'function main(context, variables) {\n  return {};\n}\n' };
    case 'api':
      return { method: 'GET', url: 'https://example.com/' };
    case 'webhook':
      return { url: 'https://example.com/hook' };
    case 'transfer':
      return { target: '+10000000000' };
    case 'close':
      return { closingScript: 'Goodbye!', disposition: 'done' };
  }
}

export const settingsOf = (block: Block): Settings => block.settings ?? {};

/** A row of a block's intents or variables, as the settings form edits it. */
export type Named = { name: string; description?: string; type?: string; length?: number };

/** A variable row with another type: a digit string's `length` goes with the `digits` type (the API refuses it on any other). */
export function retyped(row: Named, type: string): Named {
  const { length, ...rest } = row;
  return type === 'digits' && length !== undefined ? { ...rest, type, length } : { ...rest, type };
}

/** A new block of `type` with the settings the API accepts. */
export const newBlock = (id: string, type: BlockType): Block => ({ id, type, settings: defaultSettings(type) }) as Block;

/** The recipe a new one starts from: a greeting that leads to a Close. */
export const starterRecipe = (name: string): RecipeSpec => ({
  name,
  startBlockId: 'greet',
  blocks: [newBlock('greet', 'message'), newBlock('bye', 'close')],
  connections: [{ from: 'greet', exit: 'next', to: 'bye' }],
});

export interface NodeBox {
  readonly id: string;
  readonly x: number;
  readonly y: number;
  readonly exits: readonly string[];
}

export const nodeWidth = 170;
export const headerHeight = 44;
export const exitRow = 24;
const columnGap = 60;
const rowGap = 28;

export const nodeHeight = (exits: number): number => headerHeight + Math.max(exits, 1) * exitRow + 8;

/**
 * Columns by distance from the start block (breadth first over connections); blocks nothing leads
 * to go in a last column, so a half-built recipe still shows every block.
 */
export function layout(spec: RecipeSpec): NodeBox[] {
  const depth = new Map<string, number>();
  const queue: string[] = [];
  if (spec.blocks.some((b) => b.id === spec.startBlockId)) {
    depth.set(spec.startBlockId, 0);
    queue.push(spec.startBlockId);
  }
  const connections = spec.connections ?? [];
  while (queue.length > 0) {
    const id = queue.shift() as string;
    for (const c of connections) {
      if (c.from !== id || depth.has(c.to) || !spec.blocks.some((b) => b.id === c.to)) continue;
      depth.set(c.to, (depth.get(id) ?? 0) + 1);
      queue.push(c.to);
    }
  }
  const last = Math.max(-1, ...depth.values()) + 1;
  const columns = new Map<number, number>();
  return spec.blocks.map((block) => {
    const column = depth.get(block.id) ?? last;
    const exits = exitsOf(block.type, settingsOf(block));
    const y = columns.get(column) ?? 20;
    columns.set(column, y + nodeHeight(exits.length) + rowGap);
    return { id: block.id, x: 20 + column * (nodeWidth + columnGap), y, exits };
  });
}
