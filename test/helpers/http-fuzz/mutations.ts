import type { Random } from './random.js';

/**
 * Mutations of a JSON body: each takes a valid value and returns what to send, as a value
 * (serialised by the sender) or as raw text (for what JSON.stringify cannot produce).
 */
export type BodyPlan = { readonly kind: 'value'; readonly value: unknown } | { readonly kind: 'text'; readonly text: string };

type Container = Record<string, unknown> | unknown[];
interface Slot {
  readonly parent: Container;
  readonly key: string | number;
}

const isContainer = (v: unknown): v is Container => typeof v === 'object' && v !== null;

function slots(root: unknown): Slot[] {
  const out: Slot[] = [];
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (!isContainer(node)) continue;
    const entries: Array<[string | number, unknown]> = Array.isArray(node) ? node.map((v, i) => [i, v]) : Object.entries(node);
    for (const [key, value] of entries) {
      out.push({ parent: node, key });
      stack.push(value);
    }
  }
  return out;
}

const stringSlots = (root: unknown): Slot[] => slots(root).filter((s) => typeof (s.parent as Record<string, unknown>)[s.key as string] === 'string');

function set(slot: Slot, value: unknown): void {
  (slot.parent as Record<string | number, unknown>)[slot.key] = value;
}

function get(slot: Slot): unknown {
  return (slot.parent as Record<string | number, unknown>)[slot.key];
}

/** Puts `inject` into a random string (or the root when there is none), at a random position. */
function injectIntoString(value: unknown, inject: string, random: Random): unknown {
  if (typeof value === 'string') return value + inject;
  const candidates = stringSlots(value);
  if (candidates.length === 0) return value;
  const slot = random.pick(candidates);
  const text = get(slot) as string;
  const at = random.int(0, text.length);
  set(slot, text.slice(0, at) + inject + text.slice(at));
  return value;
}

const oddValues: readonly unknown[] = [null, true, false, 0, -1, 1.5, 1e308, -1e308, '', 'x', [], {}, '\u0000', '\ud800', [null], { '': null }, 2 ** 53 + 2];

/** Large but cheap: the fuzz must not spend its time generating text. */
const hugeString = (n: number): string => 'a'.repeat(n);

export const bodyMutations: Readonly<Record<string, (value: unknown, random: Random) => BodyPlan>> = {
  'wrong type': (value, random) => {
    const candidates = slots(value);
    if (candidates.length === 0) return { kind: 'value', value: random.pick(oddValues) };
    set(random.pick(candidates), random.pick(oddValues));
    return { kind: 'value', value };
  },
  'missing field': (value, random) => {
    const candidates = slots(value).filter((s) => !Array.isArray(s.parent));
    if (candidates.length > 0) {
      const slot = random.pick(candidates);
      delete (slot.parent as Record<string, unknown>)[slot.key as string];
    }
    return { kind: 'value', value };
  },
  'extra field': (value, random) => {
    const objects = [value, ...slots(value).map(get)].filter((v): v is Record<string, unknown> => isContainer(v) && !Array.isArray(v));
    if (objects.length > 0) random.pick(objects)[random.pick(['extra', '__proto__x', 'constructor', random.word()])] = random.pick(oddValues);
    return { kind: 'value', value };
  },
  'U+0000 in a string': (value, random) => ({ kind: 'value', value: injectIntoString(value, '\u0000', random) }),
  'U+0000 in a key': (value, random) => {
    const objects = [value, ...slots(value).map(get)].filter((v): v is Record<string, unknown> => isContainer(v) && !Array.isArray(v));
    if (objects.length > 0) random.pick(objects)[`k\u0000${random.word()}`] = 'v';
    return { kind: 'value', value };
  },
  'lone surrogate in a string': (value, random) => ({ kind: 'value', value: injectIntoString(value, random.pick(['\ud800', '\udfff', '\udc00x', 'x\ud83d']), random) }),
  'huge string': (value, random) => {
    const candidates = stringSlots(value);
    if (candidates.length === 0) return { kind: 'value', value: hugeString(random.int(10_000, 300_000)) };
    set(random.pick(candidates), hugeString(random.int(10_000, 300_000)));
    return { kind: 'value', value };
  },
  'huge number': (value, random) => {
    // As text: literals beyond double precision and range, which JSON.stringify cannot write.
    const marker = `"__num_${random.word()}__"`;
    const candidates = slots(value);
    if (candidates.length === 0) return { kind: 'text', text: random.pick(['1e999', '-1e999', '123456789012345678901234567890']) };
    set(random.pick(candidates), JSON.parse(marker));
    const literal = random.pick(['1e999', '-1e999', '123456789012345678901234567890', '9223372036854775808', '-0', '1e-400', '0.0000000000000000000001']);
    return { kind: 'text', text: JSON.stringify(value).replace(marker, literal) };
  },
  'deep nesting': (value, random) => {
    const depth = random.pick([100, 1_000, 20_000, 100_000]);
    const open = random.chance(0.5) ? '['.repeat(depth) : '{"a":'.repeat(depth);
    const close = open.startsWith('[') ? ']'.repeat(depth) : '}'.repeat(depth);
    const marker = `"__deep_${random.word()}__"`;
    const candidates = slots(value);
    if (candidates.length === 0) return { kind: 'text', text: `${open}1${close}` };
    set(random.pick(candidates), JSON.parse(marker));
    return { kind: 'text', text: JSON.stringify(value).replace(marker, `${open}1${close}`) };
  },
  'long array': (value, random) => {
    const candidates = slots(value);
    const long = Array.from({ length: random.pick([1_000, 20_000]) }, (_, i) => (random.chance(0.5) ? i : `item${i}`));
    if (candidates.length === 0) return { kind: 'value', value: long };
    set(random.pick(candidates), long);
    return { kind: 'value', value };
  },
  'root not an object': (_value, random) => ({ kind: 'value', value: random.pick([[], [{}], 'text', 42, null, true]) }),
  'invalid JSON': (value, random) => {
    const text = JSON.stringify(value) ?? '';
    return {
      kind: 'text',
      text: random.pick([text.slice(0, Math.max(1, Math.floor(text.length / 2))), `${text},`, `\ufeff${text}`, `${text}}`, "{'a': 1}", '{"a":}', 'NaN', '\u0000', '{"a":"\u0000"}', '{"a":"\\ud800"}', '{"\\u0000":1}', `${text}\u0000`]),
    };
  },
};

/** Bad values for a path parameter, percent-encoded as a client would send them. */
export const badPathValues: readonly string[] = [
  '%00',
  'a%00b',
  '%ED%A0%80', // UTF-8 bytes of a lone surrogate: not valid UTF-8
  '%FF%FE',
  '%C0%80', // overlong NUL
  '%',
  '%zz',
  'x'.repeat(5_000),
  '..',
  '%2E%2E',
  'a%2Fb',
  '%E2%80%AE',
  'null',
  '-1',
  '9223372036854775808',
  '00000000-0000-0000-0000-000000000000',
  '%F0%9F%98%80',
  '%20',
  'Ünïcödé',
];

/** Bad query strings (already encoded), some naming the operation's own parameters. */
export function badQuery(names: readonly string[], random: Random): string {
  const name = names.length > 0 && random.chance(0.7) ? random.pick(names) : random.pick(['unknown', 'a%00b', '%00', '', 'limit', 'cursor']);
  const value = random.pick(['%00', 'a%00', '%ED%A0%80', '%FF', 'x'.repeat(10_000), '-1', '1e999', '99999999999999999999', '', 'true', '[]', '%5B%5D', '..', 'a&b', '%']);
  return random.pick([`${name}=${value}`, `${name}=${value}&${name}=${value}`, `${name}`, `${name}[]=${value}`, `${name}[a]=1`, `${value}=${value}`]);
}
