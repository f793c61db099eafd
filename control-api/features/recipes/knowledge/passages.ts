import { asSentence, classifyLine, tableRowText } from '../../../../media/speech/markdown.js';

/**
 * A knowledge document cut into passages, the unit AnswerFlow retrieves. Markdown structure
 * decides the cuts: a heading starts a new passage (and is kept apart as the passage's section,
 * never glued to its first sentence), as does a blank line; list items and table rows become
 * sentences. Plain-text documents go through the same cutter: without marks, it splits on blank
 * lines only, and markdown pasted into a document labelled text/plain is still cleaned.
 */
export interface Passage {
  /** Headings above the passage, outermost first ("Orders > Refunds"); empty at the top. */
  readonly section: string;
  /** Plain sentences, no markdown: what is ranked, shown to a model and spoken. */
  readonly text: string;
}

/** Paragraphs longer than this are cut at sentence ends so one passage stays one topic. */
const maxPassageChars = 1200;

export function documentPassages(content: string): Passage[] {
  const passages: Passage[] = [];
  const headings: string[] = [];
  let sentences: string[] = [];
  let header: readonly string[] | undefined;
  let inFence = false;
  const flush = (): void => {
    const text = sentences.join(' ').replace(/\s+/g, ' ').trim();
    sentences = [];
    if (!text) return;
    for (const piece of splitLong(text)) passages.push({ section: headings.filter(Boolean).join(' > '), text: piece });
  };
  const lines = content.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    if (inFence) {
      if (/^\s{0,3}(```|~~~)/.test(raw)) {
        inFence = false;
        flush();
      } else if (raw.trim()) sentences.push(raw.trim());
      continue;
    }
    const line = classifyLine(raw);
    const next = i + 1 < lines.length ? classifyLine(lines[i + 1]!) : undefined;
    switch (line.kind) {
      case 'fence':
        flush();
        inFence = true;
        break;
      case 'heading':
        flush();
        setHeading(headings, line.level, line.text);
        break;
      case 'text':
        // A Setext heading is a text line underlined with === or --- (a quoted line is not).
        if (next?.kind === 'setext' && sentences.length === 0 && !/^\s{0,3}>/.test(raw)) {
          setHeading(headings, next.level, line.text);
          i++;
        } else sentences.push(line.text);
        break;
      case 'item':
        sentences.push(asSentence(line.text));
        break;
      case 'tableRow':
        if (next?.kind === 'tableDivider') {
          flush();
          header = line.cells;
          i++;
        } else sentences.push(tableRowText(line.cells, header));
        break;
      case 'blank':
      case 'rule':
      case 'setext':
      case 'tableDivider':
        header = line.kind === 'blank' || line.kind === 'rule' ? undefined : header;
        flush();
        break;
    }
  }
  flush();
  return passages;
}

function setHeading(headings: string[], level: number, text: string): void {
  headings.length = level - 1;
  headings[level - 1] = text.replace(/[.:;]$/, '');
}

function splitLong(text: string): string[] {
  if (text.length <= maxPassageChars) return [text];
  const sentences = text.match(/[^.!?।؟]+(?:[.!?।؟]+["')\]]*|$)\s*/gu) ?? [text];
  const pieces: string[] = [];
  let current = '';
  for (const sentence of sentences) {
    if (current && current.length + sentence.length > maxPassageChars) {
      pieces.push(current.trim());
      current = '';
    }
    current += sentence;
  }
  if (current.trim()) pieces.push(current.trim());
  return pieces;
}
