import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fillerDictionary, fillerPrefix } from './recognition-grammar.js';

/** The model's pronunciations (CMU dictionary plus the filler pseudo-words), by word. */
export interface Pronunciations {
  /** Dictionary lines per word, alternates ("word(2)") included. */
  readonly lines: ReadonlyMap<string, readonly string[]>;
  /** Words a grammar may use: the model's own dictionary and the extra words (not the fillers). */
  readonly known: ReadonlySet<string>;
}

let loaded: Promise<Pronunciations> | undefined;

/** Reads the dictionary once per process (135k words, ~4 MB). */
export function loadPronunciations(modelDir: string): Promise<Pronunciations> {
  loaded ??= readFile(join(modelDir, 'cmudict-en-us.dict'), 'utf8').then(
    (text) => {
      const lines = new Map<string, string[]>();
      const known = new Set<string>();
      const add = (line: string): void => {
        const space = line.indexOf(' ');
        if (space <= 0) return;
        const word = line.slice(0, space).replace(/\(\d+\)$/, '');
        // The extra words are words like any other ("nahi ji" is a no; without "nahi" a phrase
        // group kept only "ji", and a bare "ji" was heard as no), the filler pseudo-words are not.
        if (!word.startsWith(fillerPrefix)) known.add(word);
        const list = lines.get(word);
        if (list) list.push(line);
        else lines.set(word, [line]);
      };
      for (const line of text.split('\n')) add(line);
      for (const line of fillerDictionary().split('\n')) add(line);
      return { lines, known };
    },
    (error: unknown) => {
      loaded = undefined;
      throw error;
    },
  );
  return loaded;
}

/**
 * The dictionary a JSGF grammar needs: only the words it uses. pocketsphinx reads the whole
 * dictionary file on every run; the full 135k-word one costs about 0.3 s per decode on this
 * machine, a grammar's few hundred words next to nothing, and that time is dead air on a call.
 */
export function grammarDictionary(grammar: string, pronunciations: Pronunciations): string {
  const body = grammar
    .split('\n')
    .filter((line) => !/^\s*(#JSGF|grammar\s)/.test(line))
    .join('\n')
    .replace(/<[^>]*>/g, ' ')
    .replace(/\bpublic\b/g, ' ');
  const out: string[] = [];
  for (const token of new Set(body.toLowerCase().split(/[^a-z'_]+/))) {
    const lines = token ? pronunciations.lines.get(token) : undefined;
    if (lines) out.push(...lines);
  }
  return `${out.join('\n')}\n`;
}
