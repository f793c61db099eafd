/**
 * Markdown to speakable text (CommonMark's common constructs, not a full parser). Models and
 * knowledge documents write markdown; a TTS engine would read its marks aloud ("hash Refunds",
 * "asterisk asterisk"). Only marks in markdown positions are removed, so "press * or #" keeps
 * its keys: emphasis needs a mark hugging a word on both sides, a heading a `#` run at the start
 * of a line followed by a space.
 */

const SENTENCE_END = /[.!?:;।؟…]["')\]]*$/u;

/** Inline markup: links and images -> their text, code ticks, emphasis, strike-through, tags, escapes. */
export function inlineToPlain(text: string): string {
  return text
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\((?:[^()]|\([^)]*\))*\)/g, '$1')
    .replace(/\[([^\]]+)\]\[[^\]]*\]/g, '$1')
    .replace(/<((?:https?|mailto):[^>\s]+)>/g, '$1')
    .replace(/(`+)(.+?)\1/g, (_all, _ticks: string, code: string) => code.trim())
    .replace(/(\*\*|__)(?=\S)(.+?)(?<=\S)\1/g, '$2')
    .replace(/(?<![\p{L}\p{N}*\\])\*(?=[^\s*])([^*\n]*?[^\s*\\])\*(?![\p{L}\p{N}*])/gu, '$1')
    .replace(/(?<![\p{L}\p{N}_\\])_(?=[^\s_])([^_\n]*?[^\s_\\])_(?![\p{L}\p{N}_])/gu, '$1')
    .replace(/~~(?=\S)(.+?)(?<=\S)~~/g, '$1')
    .replace(/<\/?[a-zA-Z][a-zA-Z0-9-]*(?:\s[^<>]*)?\/?>/g, ' ')
    .replace(/\\([\\`*_{}[\]()#+\-.!|>~])/g, '$1')
    .replace(/[ \t]{2,}/g, ' ')
    .trim();
}

/** A line's block-level role. Tables are told apart by their pipes, lists by their markers. */
export type MarkdownLine =
  | { readonly kind: 'blank' }
  | { readonly kind: 'fence' }
  | { readonly kind: 'rule' }
  | { readonly kind: 'heading'; readonly level: number; readonly text: string }
  | { readonly kind: 'setext'; readonly level: number }
  | { readonly kind: 'tableDivider' }
  | { readonly kind: 'tableRow'; readonly cells: readonly string[] }
  | { readonly kind: 'item'; readonly text: string }
  | { readonly kind: 'text'; readonly text: string };

export function classifyLine(raw: string): MarkdownLine {
  const line = raw.replace(/^(?:\s{0,3}>\s?)+/, '');
  if (!line.trim()) return { kind: 'blank' };
  if (/^\s{0,3}(```|~~~)/.test(line)) return { kind: 'fence' };
  const heading = /^\s{0,3}(#{1,6})(?:\s+(.*?))?(?:\s+#+)?\s*$/.exec(line);
  if (heading) return { kind: 'heading', level: heading[1]!.length, text: inlineToPlain(heading[2] ?? '') };
  if (/^\s{0,3}=+\s*$/.test(line)) return { kind: 'setext', level: 1 };
  if (/^\s{0,3}-+\s*$/.test(line)) return { kind: 'setext', level: 2 };
  if (/^\s{0,3}([-*_])(?:\s*\1){2,}\s*$/.test(line)) return { kind: 'rule' };
  if (/^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)+\|?\s*$/.test(line)) return { kind: 'tableDivider' };
  if (/^\s*\|.*\|\s*$/.test(line) || (line.split('|').length >= 3 && !/^\s*([-*+•]|\d+[.)])\s/.test(line))) {
    const cells = line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((c) => inlineToPlain(c));
    return { kind: 'tableRow', cells };
  }
  const item = /^\s*(?:[-*+•]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?(.*)$/.exec(line);
  if (item) return { kind: 'item', text: inlineToPlain(item[1] ?? '') };
  return { kind: 'text', text: inlineToPlain(line) };
}

/** Ends a heading, list item or table row with a full stop so it is spoken as its own sentence. */
export function asSentence(text: string): string {
  const t = text.trim();
  return !t || SENTENCE_END.test(t) ? t : `${t}.`;
}

/** A table row as words: "Plan: Basic, Price: $10." when the table has a header row. */
export function tableRowText(cells: readonly string[], header: readonly string[] | undefined): string {
  const parts = cells.map((cell, i) => (header?.[i] && cell ? `${header[i]}: ${cell}` : cell)).filter(Boolean);
  return asSentence(parts.join(', '));
}

/**
 * Text for TTS: every line stripped of its markdown; headings, list items and table rows become
 * sentences of their own so they are not glued to the words after them.
 */
export function markdownToSpeech(text: string): string {
  if (!/[#*_`[\]|<>~\\]|^\s*(?:[-+•]|\d+[.)])\s/m.test(text)) return text;
  const lines = text.split(/\r?\n/);
  const out: string[] = [];
  let header: readonly string[] | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = classifyLine(lines[i]!);
    const next = i + 1 < lines.length ? classifyLine(lines[i + 1]!) : undefined;
    if (line.kind === 'heading' || line.kind === 'item') out.push(asSentence(line.text));
    else if (line.kind === 'tableRow') {
      if (next?.kind === 'tableDivider') header = line.cells;
      else out.push(tableRowText(line.cells, header));
    } else if (line.kind === 'text') out.push(next?.kind === 'setext' && !/^\s{0,3}>/.test(lines[i]!) ? asSentence(line.text) : line.text);
    if (line.kind === 'blank') header = undefined;
  }
  return out.filter(Boolean).join(' ');
}
