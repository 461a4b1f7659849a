import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { invalid } from './errors.js';

/** One server-sent event. `data` is JSON text; `id` is the run event stream position. */
export interface SseMessage {
  event: string;
  data: string;
  id?: number | string;
}

/**
 * Frames one SSE message: `event:`, one `data:` line per line of the payload,
 * `id:`, blank line. Newlines in the event name or id are dropped so a value
 * can never start a new field.
 */
export function formatSse(msg: SseMessage): string {
  const event = msg.event.replace(/[\r\n]/g, '');
  const data = msg.data
    .split(/\r\n|\r|\n/)
    .map((line) => `data: ${line}\n`)
    .join('');
  const id = msg.id === undefined ? '' : `id: ${String(msg.id).replace(/[\r\n]/g, '')}\n`;
  return `event: ${event}\n${data}${id}\n`;
}

/**
 * The `Last-Event-ID` request header as a stream position (0 when absent: from the first event).
 * "-1" also means from the first event: the SDK's `useStream` sends it to replay a run it rejoins
 * after a reload. 422 for anything else that is not a non-negative integer.
 */
export function parseLastEventId(header: string | string[] | undefined): number {
  const raw = Array.isArray(header) ? header[0] : header;
  if (raw === undefined || raw.trim() === '') return 0;
  const s = raw.trim();
  if (s === '-1') return 0;
  if (!/^\d{1,15}$/.test(s)) throw invalid('headers.last-event-id', `must be a non-negative integer (an SSE id sent by this server), got "${s}"`);
  return Number(s);
}

export const SSE_HEADERS: OutgoingHttpHeaders = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  // Disables response buffering in nginx-style proxies.
  'x-accel-buffering': 'no',
};

/** Writes SSE to a raw response with backpressure, plus keep-alive comments. */
export class SseWriter {
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(private readonly res: ServerResponse) {}

  get closed(): boolean {
    return this.res.destroyed || this.res.writableEnded;
  }

  /** Sends the 200 head: `headers` (e.g. those set on the Fastify reply) plus the SSE ones. */
  open(headers: Record<string, string | number | readonly string[] | undefined>, heartbeatMs: number): void {
    const head: Record<string, string | number | string[]> = {};
    for (const [k, v] of Object.entries(headers)) if (v !== undefined) head[k] = typeof v === 'object' ? [...v] : v;
    this.res.writeHead(200, { ...head, ...SSE_HEADERS } as OutgoingHttpHeaders);
    this.res.flushHeaders();
    if (heartbeatMs > 0) {
      this.heartbeat = setInterval(() => {
        if (!this.closed) this.res.write(': heartbeat\n\n');
      }, heartbeatMs);
      this.heartbeat.unref();
    }
  }

  async send(msg: SseMessage): Promise<void> {
    if (this.closed) return;
    if (!this.res.write(formatSse(msg))) await this.drained();
  }

  end(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    if (!this.closed) this.res.end();
  }

  private drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      this.res.on('drain', done);
      this.res.on('close', done);
    });
  }
}
