/** Keeps the last lines a process printed, to show with an error when it fails to start or dies. */
export class LogTail {
  readonly #lines: string[] = [];
  #partial = '';

  constructor(private readonly maxLines = 30) {}

  push(chunk: string): string[] {
    const text = this.#partial + chunk;
    const pieces = text.split(/\r?\n/);
    this.#partial = pieces.pop() ?? '';
    for (const line of pieces) {
      this.#lines.push(line);
      if (this.#lines.length > this.maxLines) this.#lines.shift();
    }
    return pieces;
  }

  text(): string {
    const lines = this.#partial === '' ? this.#lines : [...this.#lines, this.#partial];
    return lines.join('\n');
  }
}
