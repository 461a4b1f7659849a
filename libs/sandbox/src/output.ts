/** Collects a child's output up to a byte budget shared by stdout and stderr; the rest is counted, not kept. */
export class CappedOutput {
  private readonly chunks = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
  private kept = 0;
  /** Bytes received beyond the budget. */
  dropped = 0;

  constructor(private readonly maxBytes: number) {}

  push(stream: 'stdout' | 'stderr', chunk: Buffer): void {
    const room = this.maxBytes - this.kept;
    if (room <= 0) {
      this.dropped += chunk.length;
      return;
    }
    const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.chunks[stream].push(part);
    this.kept += part.length;
    this.dropped += chunk.length - part.length;
  }

  text(stream: 'stdout' | 'stderr'): string {
    // A multi-byte character cut at the budget decodes as U+FFFD, not an error.
    return Buffer.concat(this.chunks[stream]).toString('utf8');
  }
}
