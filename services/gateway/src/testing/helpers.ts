/** A parsed server-sent event. `data` is the JSON-decoded payload. */
export interface ParsedSseEvent {
  event: string;
  data: unknown;
  id: string | undefined;
}

/** Parses a complete SSE response body (comments skipped, multi-line data joined). */
export function parseSse(text: string): ParsedSseEvent[] {
  const out: ParsedSseEvent[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    let event = '';
    let id: string | undefined;
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line === '' || line.startsWith(':')) continue;
      const sep = line.indexOf(':');
      const field = sep === -1 ? line : line.slice(0, sep);
      const value = sep === -1 ? '' : line.slice(sep + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id') id = value;
    }
    if (event === '' && data.length === 0) continue;
    out.push({ event, data: data.length ? (JSON.parse(data.join('\n')) as unknown) : null, id });
  }
  return out;
}

/** A latch: `wait()` resolves once `open()` is called. Use as the fake orchestrator's gate to hold runs open. */
export function latch(): { wait: () => Promise<void>; open: () => void } {
  let open!: () => void;
  const p = new Promise<void>((resolve) => (open = resolve));
  return { wait: () => p, open };
}

/** Polls `get` until `ok` holds; the 20 s limit is a safety net against hangs, not a timing assertion. */
export async function until<T>(what: string, get: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  const stop = Date.now() + 20_000;
  for (;;) {
    const v = await get();
    if (ok(v)) return v;
    if (Date.now() > stop) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
