import {
  conditionSettingsSchema,
  type ConditionBranch,
  type ConditionGroup,
  type ConditionRule,
  type ConditionSettings,
} from '../../../model/recipes/recipe-schema.js';
import type { BlockContext, BlockModule } from '../runtime/block.js';

/** Condition: branches are tried top to bottom; the first that matches is the exit, else `else`. */
export const conditionBlock: BlockModule<ConditionSettings> = {
  type: 'condition',
  settings: conditionSettingsSchema,
  async run(ctx, settings) {
    for (const branch of settings.branches) if (branchMatches(ctx, branch)) return { exit: branch.name };
    return { exit: 'else' };
  },
};

function branchMatches(ctx: BlockContext, branch: ConditionBranch): boolean {
  const results = branch.rules.map((rule) => ('rules' in rule ? groupMatches(ctx, rule) : ruleMatches(ctx, rule)));
  return branch.combinator === 'or' ? results.some(Boolean) : results.every(Boolean);
}

function groupMatches(ctx: BlockContext, group: ConditionGroup): boolean {
  const results = group.rules.map((rule) => ruleMatches(ctx, rule));
  return group.combinator === 'or' ? results.some(Boolean) : results.every(Boolean);
}

/** Caller-influenced text is compared only up to this length, bounding regex work. */
const maxSubjectLength = 2_000;

export function ruleMatches(ctx: Pick<BlockContext, 'lookup' | 'warn'>, rule: ConditionRule): boolean {
  const left = ctx.lookup(rule.variable);
  const right = rule.valueVariable !== undefined ? ctx.lookup(rule.valueVariable) : rule.value;
  switch (rule.operator) {
    case 'isEmpty':
      return isEmpty(left);
    case 'isNotEmpty':
      return !isEmpty(left);
    case 'equals':
      return equal(left, right);
    case 'notEquals':
      return !equal(left, right);
    case 'lessThan':
      return compare(left, right) === -1;
    case 'greaterThan':
      return compare(left, right) === 1;
    case 'contains':
      return contains(left, right);
    case 'notContains':
      return !contains(left, right);
    case 'startsWith':
      return text(left).startsWith(text(right));
    case 'endsWith':
      return text(left).endsWith(text(right));
    case 'matchesRegex': {
      const pattern = String(right ?? '');
      if (!isLinearSafe(pattern)) {
        ctx.warn(`regular expression in condition on '${rule.variable}' refused: nested quantifiers or backreferences can backtrack for minutes`);
        return false;
      }
      try {
        return new RegExp(pattern, 'iu').test(String(left ?? '').slice(0, maxSubjectLength));
      } catch {
        ctx.warn(`invalid regular expression in condition on '${rule.variable}'`);
        return false;
      }
    }
  }
}

/**
 * V8 regular expressions have no time limit and run on the event loop every call shares, so a
 * pattern whose matching can go exponential on caller text is refused: a quantified group that
 * itself contains a quantifier (`(a+)+`, `(\w*)*`, `(a|aa){2,}`-style) or a backreference. A
 * heuristic, deliberately strict; simple validation patterns (`^\d{6}$`, `^INV-\d+`) pass.
 */
export function isLinearSafe(pattern: string): boolean {
  if (/\\[1-9]|\\k</.test(pattern)) return false;
  const stack: boolean[] = [];
  let quantifiedInside = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === '[') {
      while (i < pattern.length && pattern[i] !== ']') i += pattern[i] === '\\' ? 2 : 1;
      continue;
    }
    if (c === '(') {
      stack.push(quantifiedInside);
      quantifiedInside = false;
    } else if (c === ')') {
      const inner: boolean = quantifiedInside;
      quantifiedInside = stack.pop() ?? false;
      const next = pattern[i + 1];
      const groupQuantified = next === '*' || next === '+' || next === '{';
      if (groupQuantified && (inner || /\|/.test(groupBody(pattern, i)))) return false;
      quantifiedInside = quantifiedInside || inner || groupQuantified;
    } else if (c === '*' || c === '+' || c === '{') {
      quantifiedInside = true;
    }
  }
  return true;
}

/** Text of the group that closes at `end` (for the alternation check). */
function groupBody(pattern: string, end: number): string {
  let depth = 0;
  for (let i = end; i >= 0; i--) {
    if (pattern[i] === ')' && pattern[i - 1] !== '\\') depth++;
    if (pattern[i] === '(' && pattern[i - 1] !== '\\') depth--;
    if (depth === 0) return pattern.slice(i + 1, end);
  }
  return pattern;
}

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value === 'string') return value.trim() === '';
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === 'object') return Object.keys(value).length === 0;
  return false;
}

function text(value: unknown): string {
  if (value === undefined || value === null) return '';
  return (typeof value === 'object' ? JSON.stringify(value) : String(value)).trim().toLowerCase().normalize('NFKC');
}

function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && value.trim() !== '' && /^[-+]?[\d,]*\.?\d+$/.test(value.trim())) return Number(value.trim().replace(/,/g, ''));
  return undefined;
}

/** Numbers compare as numbers ("10" equals 10.0), everything else as case-insensitive text. */
function equal(left: unknown, right: unknown): boolean {
  const a = asNumber(left);
  const b = asNumber(right);
  if (a !== undefined && b !== undefined) return a === b;
  return text(left) === text(right);
}

/** -1, 0, 1, or undefined when the two are not comparable (a missing value never matches). */
function compare(left: unknown, right: unknown): -1 | 0 | 1 | undefined {
  const a = asNumber(left);
  const b = asNumber(right);
  if (a !== undefined && b !== undefined) return a < b ? -1 : a > b ? 1 : 0;
  const isoDate = /^\d{4}-\d{2}-\d{2}/;
  if (typeof left === 'string' && typeof right === 'string' && isoDate.test(left) && isoDate.test(right)) {
    return left < right ? -1 : left > right ? 1 : 0;
  }
  return undefined;
}

function contains(left: unknown, right: unknown): boolean {
  if (Array.isArray(left)) return left.some((item) => equal(item, right));
  const needle = text(right);
  return needle !== '' && text(left).includes(needle);
}
