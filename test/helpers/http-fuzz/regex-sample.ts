import type { Random } from './random.js';

/**
 * Produces a string matching a JSON Schema `pattern` (the ECMAScript subset our schemas use:
 * classes, escapes, groups, alternation, quantifiers, anchors). Enough to make schema-driven
 * requests pass validation and reach the store; not a full regex engine.
 */
type Node =
  | { readonly kind: 'chars'; readonly set: string }
  | { readonly kind: 'alt'; readonly options: readonly Node[][] }
  | { readonly kind: 'repeat'; readonly node: Node; readonly min: number; readonly max: number };

const digits = '0123456789';
const word = `abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ${digits}_`;
const printable = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join('');

function escapeSet(c: string): string {
  switch (c) {
    case 'd':
      return digits;
    case 'w':
      return word;
    case 's':
      return ' ';
    case 'D':
    case 'W':
    case 'S':
      return '-';
    default:
      return c;
  }
}

class Parser {
  private at = 0;
  constructor(private readonly src: string) {}

  parse(): Node {
    const node = this.alternation();
    return node;
  }

  private alternation(): Node {
    const options: Node[][] = [this.sequence()];
    while (this.src[this.at] === '|') {
      this.at += 1;
      options.push(this.sequence());
    }
    return { kind: 'alt', options };
  }

  private sequence(): Node[] {
    const out: Node[] = [];
    while (this.at < this.src.length && this.src[this.at] !== '|' && this.src[this.at] !== ')') {
      const atom = this.atom();
      if (atom) out.push(this.quantified(atom));
    }
    return out;
  }

  private atom(): Node | undefined {
    const c = this.src[this.at++]!;
    if (c === '^' || c === '$') return undefined;
    if (c === '(') {
      if (this.src.startsWith('?:', this.at)) this.at += 2;
      const inner = this.alternation();
      this.at += 1; // ')'
      return inner;
    }
    if (c === '[') return this.charClass();
    if (c === '.') return { kind: 'chars', set: word };
    if (c === '\\') return { kind: 'chars', set: escapeSet(this.src[this.at++]!) };
    return { kind: 'chars', set: c };
  }

  private charClass(): Node {
    const negated = this.src[this.at] === '^';
    if (negated) this.at += 1;
    let set = '';
    let first = true;
    while (this.at < this.src.length && (this.src[this.at] !== ']' || first)) {
      first = false;
      let c = this.src[this.at++]!;
      if (c === '\\') {
        const e = this.src[this.at++]!;
        set += escapeSet(e === 'u' ? String.fromCharCode(parseInt(this.src.slice(this.at, (this.at += 4)), 16)) : e);
        continue;
      }
      if (this.src[this.at] === '-' && this.src[this.at + 1] !== ']' && this.at + 1 < this.src.length) {
        this.at += 1;
        let end = this.src[this.at++]!;
        if (end === '\\') end = this.src[this.at++]!;
        for (let code = c.charCodeAt(0); code <= end.charCodeAt(0); code += 1) set += String.fromCharCode(code);
        continue;
      }
      c = c === '\\' ? '' : c;
      set += c;
    }
    this.at += 1; // ']'
    if (negated) set = [...printable].filter((ch) => !set.includes(ch) && ch !== ' ').join('') || 'x';
    return { kind: 'chars', set };
  }

  private quantified(node: Node): Node {
    const c = this.src[this.at];
    let bounds: [number, number];
    if (c === '?') bounds = [0, 1];
    else if (c === '*') bounds = [0, 4];
    else if (c === '+') bounds = [1, 4];
    else if (c === '{') {
      const close = this.src.indexOf('}', this.at);
      const [lo, hi] = this.src.slice(this.at + 1, close).split(',');
      const min = Number(lo);
      bounds = [min, hi === undefined ? min : hi === '' ? min + 4 : Number(hi)];
      this.at = close;
    } else return node;
    const [min, max] = bounds;
    this.at += 1;
    if (this.src[this.at] === '?') this.at += 1;
    return { kind: 'repeat', node, min, max };
  }
}

function render(node: Node, random: Random, out: string[]): void {
  if (node.kind === 'chars') out.push(node.set[random.int(0, node.set.length - 1)]!);
  else if (node.kind === 'alt') for (const n of random.pick(node.options)) render(n, random, out);
  else {
    const count = random.int(node.min, Math.min(node.max, node.min + 6));
    for (let i = 0; i < count; i += 1) render(node.node, random, out);
  }
}

export function sampleRegex(pattern: string, random: Random): string {
  const tree = new Parser(pattern).parse();
  const regex = new RegExp(pattern, 'u');
  let last = '';
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const out: string[] = [];
    render(tree, random, out);
    last = out.join('');
    if (regex.test(last)) return last;
  }
  return last;
}
