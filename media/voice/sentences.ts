/**
 * Sentence cutting for speech: TTS starts on the first sentence while the model still writes
 * the rest, and an interruption is reported per sentence and word.
 */
const END = /([.!?।؟]+)(\s+|$)/u;

/** Cuts complete sentences off `buffer`; returns them and the unfinished rest. */
export function takeSentences(buffer: string): { sentences: string[]; rest: string } {
  const sentences: string[] = [];
  let rest = buffer;
  for (;;) {
    const m = END.exec(rest);
    if (!m || m.index + m[0].length === rest.length && m[2] === '') break;
    const cut = m.index + m[1]!.length;
    const sentence = rest.slice(0, cut).trim();
    if (sentence) sentences.push(sentence);
    rest = rest.slice(cut).replace(/^\s+/, '');
  }
  return { sentences, rest };
}

export function splitSentences(text: string): string[] {
  const { sentences, rest } = takeSentences(text);
  return rest.trim() ? [...sentences, rest.trim()] : sentences;
}

/** Sentences from streamed pieces, each as soon as it is complete. */
export async function* sentencesOf(pieces: AsyncIterable<string>): AsyncIterable<string> {
  let buffer = '';
  for await (const piece of pieces) {
    buffer += piece;
    const { sentences, rest } = takeSentences(buffer);
    buffer = rest;
    yield* sentences;
  }
  if (buffer.trim()) yield buffer.trim();
}

/** The words of `sentence` not yet heard when `fraction` of its audio was played. */
export function unspokenWords(sentence: string, fraction: number): string {
  const words = sentence.split(/\s+/).filter(Boolean);
  const heard = Math.floor(words.length * Math.max(0, Math.min(1, fraction)));
  return words.slice(heard).join(' ');
}
