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

/**
 * Reads the dictionary once per process (135k words, ~4 MB): which words a grammar may use. The
 * decoder workers load the same dictionary themselves and get the filler and extra words with
 * each request (they add those they lack).
 */
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
