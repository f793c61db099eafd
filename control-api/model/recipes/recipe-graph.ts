import type { z } from 'zod';
import type { FieldIssue } from '../../../core/errors.js';
import { recipeSchema, type Block, type Recipe } from './recipe-schema.js';

/**
 * Structural rules over a Recipe's block graph (spec: "Recipe blocks and their settings", Code
 * block, Errors). Errors make a recipe unusable; warnings (unreachable blocks, exits left open)
 * are reported but accepted, because a half-built recipe is a normal state in the builder.
 *
 * Runtime contract: a block leaves through one of `exitsOf(block)`; an exit with no connection
 * ends the call, which is why the exits a failure path depends on must be connected.
 */

export type GraphIssueSeverity = 'error' | 'warning';

export interface GraphIssue extends FieldIssue {
  readonly severity: GraphIssueSeverity;
}

/** Exit names per block, in the order the builder shows them. The runtime routes on these. */
export function exitsOf(block: Block): readonly string[] {
  switch (block.type) {
    case 'message':
    case 'webhook':
      return ['next'];
    case 'smartAi':
      return [...block.settings.intents.map((i) => i.name), 'fallback'];
    case 'ask':
      // `next`: the information was captured; intents let the caller steer elsewhere.
      return ['next', ...block.settings.intents.map((i) => i.name), 'fallback'];
    case 'condition':
      return [...block.settings.branches.map((b) => b.name), 'else'];
    case 'code':
      return ['ifSuccess', 'ifFails'];
    case 'api':
      return ['success', 'failure'];
    case 'transfer':
      // A completed transfer hands the call away; `failed` covers busy, no answer, rejected.
      return ['failed'];
    case 'close':
      return [];
  }
}

/** Exits that must lead somewhere for the recipe to be accepted. */
export function requiredExitsOf(block: Block): readonly string[] {
  switch (block.type) {
    case 'message':
    case 'webhook':
      return ['next'];
    case 'smartAi':
    case 'ask':
      return ['fallback'];
    case 'condition':
      return ['else'];
    case 'code':
      // The spec requires only the failure path; an unconnected If Success ends the call like any exit.
      return ['ifFails'];
    default:
      return [];
  }
}

const exitLabel: Readonly<Record<string, string>> = {
  fallback: 'Fallback Node',
  ifFails: 'If Fails',
  ifSuccess: 'If Success',
  else: 'Else',
};

const typeLabel: Readonly<Record<Block['type'], string>> = {
  message: 'Message',
  smartAi: 'SmartAI',
  ask: 'Ask',
  condition: 'Condition',
  code: 'Code',
  api: 'API',
  webhook: 'Webhook',
  transfer: 'Transfer',
  close: 'Close',
};

/** Validates the graph of a recipe already valid against `recipeSchema`. */
export function validateRecipeGraph(recipe: Pick<Recipe, 'blocks' | 'connections' | 'startBlockId'>): GraphIssue[] {
  const issues: GraphIssue[] = [];
  const error = (path: string, message: string) => issues.push({ path, message, severity: 'error' });
  const warning = (path: string, message: string) => issues.push({ path, message, severity: 'warning' });

  const blocks = new Map<string, { block: Block; index: number }>();
  recipe.blocks.forEach((block, index) => {
    if (!blocks.has(block.id)) blocks.set(block.id, { block, index });
  });

  if (!blocks.has(recipe.startBlockId)) {
    error('startBlockId', `start block '${recipe.startBlockId}' does not exist`);
  }

  const outgoing = new Map<string, Map<string, number>>();
  recipe.connections.forEach((connection, index) => {
    const from = blocks.get(connection.from);
    const to = blocks.get(connection.to);
    if (!from) error(`connections.${index}.from`, `connection ${index} starts at block '${connection.from}', which does not exist`);
    if (!to) error(`connections.${index}.to`, `connection ${index} leads to block '${connection.to}', which does not exist`);
    if (!from) return;
    const exits = exitsOf(from.block);
    if (!exits.includes(connection.exit)) {
      const allowed = exits.length ? exits.join(', ') : 'none (a Close block has no exits)';
      error(
        `connections.${index}.exit`,
        `${typeLabel[from.block.type]} block '${from.block.id}' has no exit '${connection.exit}'; its exits are: ${allowed}`,
      );
      return;
    }
    const byExit = outgoing.get(from.block.id) ?? new Map<string, number>();
    outgoing.set(from.block.id, byExit);
    const earlier = byExit.get(connection.exit);
    if (earlier !== undefined) {
      error(
        `connections.${index}`,
        `exit '${connection.exit}' of block '${from.block.id}' is connected twice (connections ${earlier} and ${index}); an exit leads to one block`,
      );
      return;
    }
    byExit.set(connection.exit, index);
  });

  for (const { block, index } of blocks.values()) {
    const connected = outgoing.get(block.id) ?? new Map<string, number>();
    const name = `${typeLabel[block.type]} block '${block.id}'`;
    if (block.type === 'message' && connected.size !== 1) {
      error(`blocks.${index}`, `${name} must have exactly one outgoing connection (has ${connected.size})`);
      continue;
    }
    for (const exit of requiredExitsOf(block)) {
      if (!connected.has(exit) && block.type !== 'message') {
        error(`blocks.${index}`, `${name} must connect its ${exitLabel[exit] ?? exit} exit ('${exit}')`);
      }
    }
    for (const exit of exitsOf(block)) {
      if (!connected.has(exit) && !requiredExitsOf(block).includes(exit)) {
        warning(`blocks.${index}`, `exit '${exit}' of ${name} is not connected; taking it ends the call`);
      }
    }
  }

  for (const loop of unconditionalLoops(recipe, blocks, outgoing)) {
    const first = blocks.get(loop[0] as string);
    error(`blocks.${first?.index ?? 0}`, `blocks ${loop.map((id) => `'${id}'`).join(' -> ')} -> '${loop[0]}' loop forever without waiting for the caller`);
  }

  for (const id of unreachableBlocks(recipe, outgoing)) {
    const entry = blocks.get(id);
    if (entry) warning(`blocks.${entry.index}`, `block '${id}' cannot be reached from the start block '${recipe.startBlockId}'`);
  }
  return issues;
}

/**
 * Cycles made only of blocks with a single unconditional exit (Message, Webhook): once entered
 * they never end. Loops through a Condition, Code or a waiting block may be bounded, so they pass.
 */
function unconditionalLoops(
  recipe: Pick<Recipe, 'connections'>,
  blocks: ReadonlyMap<string, { block: Block }>,
  outgoing: ReadonlyMap<string, ReadonlyMap<string, number>>,
): string[][] {
  const loops: string[][] = [];
  const settled = new Set<string>();
  const unconditional = (id: string) => {
    const type = blocks.get(id)?.block.type;
    return type === 'message' || type === 'webhook';
  };
  for (const start of blocks.keys()) {
    if (settled.has(start) || !unconditional(start)) continue;
    const path: string[] = [];
    let current: string | undefined = start;
    while (current && unconditional(current) && !settled.has(current) && !path.includes(current)) {
      path.push(current);
      const index: number | undefined = outgoing.get(current)?.get('next');
      current = index === undefined ? undefined : recipe.connections[index]?.to;
    }
    if (current && path.includes(current)) loops.push(path.slice(path.indexOf(current)));
    path.forEach((id) => settled.add(id));
  }
  return loops;
}

function unreachableBlocks(
  recipe: Pick<Recipe, 'blocks' | 'connections' | 'startBlockId'>,
  outgoing: ReadonlyMap<string, ReadonlyMap<string, number>>,
): string[] {
  const ids = new Set(recipe.blocks.map((b) => b.id));
  if (!ids.has(recipe.startBlockId)) return [];
  const seen = new Set<string>([recipe.startBlockId]);
  const queue = [recipe.startBlockId];
  while (queue.length > 0) {
    const id = queue.shift() as string;
    for (const index of outgoing.get(id)?.values() ?? []) {
      const next = recipe.connections[index]?.to;
      if (next && ids.has(next) && !seen.has(next)) {
        seen.add(next);
        queue.push(next);
      }
    }
  }
  return [...ids].filter((id) => !seen.has(id));
}

/** Graph errors as zod issues, so one parse reports shape and structure together. */
function refineGraph(recipe: Recipe, ctx: z.RefinementCtx): void {
  for (const issue of validateRecipeGraph(recipe)) {
    if (issue.severity !== 'error') continue;
    ctx.addIssue({ code: 'custom', path: issue.path.split('.').map((p) => (/^\d+$/.test(p) ? Number(p) : p)), message: issue.message });
  }
}

/** The Recipe resource schema: shape (recipe-schema.ts) plus the structural rules above. */
export const validRecipeSchema = recipeSchema.superRefine(refineGraph);
