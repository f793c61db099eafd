/** A push-fed async iterable of text pieces: model deltas in, speech synthesis out. */
export class TextStream implements AsyncIterable<string> {
  private readonly pieces: string[] = [];
  private ended = false;
  private wake: (() => void) | undefined;

  push(piece: string): void {
    if (this.ended || piece === '') return;
    this.pieces.push(piece);
    this.wake?.();
  }

  end(): void {
    this.ended = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<string> {
    for (;;) {
      const next = this.pieces.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}
