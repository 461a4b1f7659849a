import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** What an OTLP/HTTP JSON export carries, as far as the tests read it (ids are hex strings in OTLP/JSON). */
type KeyValue = { key: string; value: Record<string, unknown> };
interface Resource {
  attributes?: KeyValue[];
}
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  name: string;
  attributes?: KeyValue[];
}
export interface OtlpLogRecord {
  traceId?: string;
  spanId?: string;
  severityText?: string;
  body?: { stringValue?: string };
  attributes?: KeyValue[];
}
export interface OtlpMetric {
  name: string;
  [kind: string]: unknown;
}

/**
 * An in-process OTLP/HTTP receiver (the JSON encoding the `-otlp-http` exporters send): collects
 * what arrives on /v1/traces, /v1/metrics and /v1/logs, and answers 200 as a collector does.
 */
export async function startOtlpReceiver() {
  const bodies: Record<'traces' | 'metrics' | 'logs', unknown[]> = { traces: [], metrics: [], logs: [] };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const signal = /^\/v1\/(traces|metrics|logs)$/.exec(req.url ?? '')?.[1] as keyof typeof bodies | undefined;
      if (!signal || !String(req.headers['content-type']).includes('json')) {
        res.writeHead(415).end();
        return;
      }
      let raw = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') raw = gunzipSync(raw);
      bodies[signal].push(JSON.parse(raw.toString('utf8')));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const each = <T>(signal: keyof typeof bodies, resourceKey: string, scopeKey: string, itemKey: string) =>
    (bodies[signal] as Array<Record<string, Array<Record<string, unknown>>>>).flatMap((b) =>
      (b[resourceKey] ?? []).flatMap((r) =>
        ((r[scopeKey] as Array<Record<string, unknown>>) ?? []).flatMap((s) =>
          ((s[itemKey] as T[]) ?? []).map((item) => ({ item, resource: r.resource as Resource })),
        ),
      ),
    );
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans: () => each<OtlpSpan>('traces', 'resourceSpans', 'scopeSpans', 'spans'),
    logRecords: () => each<OtlpLogRecord>('logs', 'resourceLogs', 'scopeLogs', 'logRecords'),
    metrics: () => each<OtlpMetric>('metrics', 'resourceMetrics', 'scopeMetrics', 'metrics'),
    async close() {
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** The string value of an OTLP attribute list entry. */
export function attr(list: KeyValue[] | undefined, key: string): unknown {
  const v = list?.find((a) => a.key === key)?.value;
  return v ? Object.values(v)[0] : undefined;
}
