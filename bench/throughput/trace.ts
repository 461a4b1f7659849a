/**
 * Per-step breakdown of a run from AgentLoop's own OpenTelemetry spans: a tiny OTLP/HTTP (JSON)
 * receiver the AgentLoop processes export to (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), and a tree of
 * the spans of the traced runs with the median duration of each span and of the time inside a
 * span that none of its children covers (the parent's own work: checkpoints, events, ledger...),
 * and the gap before each span since the end of its previous sibling (or its parent's start).
 * Span start times have 1 ms resolution (the OpenTelemetry JS SDK starts from Date.now());
 * durations are exact, gaps are ±1 ms.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fmt, median, percentile } from './stats.js';

export interface SpanRecord {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  service: string;
  /** ms since the epoch (from the ns fields). */
  start: number;
  end: number;
}

interface OtlpValue {
  stringValue?: string;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
}
interface OtlpExport {
  resourceSpans?: Array<{
    resource?: { attributes?: Array<{ key: string; value: OtlpValue }> };
    scopeSpans?: Array<{ spans?: OtlpSpan[] }>;
  }>;
}

const nsToMs = (v: string | number) => Number(BigInt(v) / 1000n) / 1000;

export interface OtlpReceiver {
  /** The traces endpoint (`…/v1/traces`). */
  url: string;
  spans: SpanRecord[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: SpanRecord[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport;
        for (const rs of body.resourceSpans ?? []) {
          const service = rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue ?? '?';
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              spans.push({
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId || undefined,
                name: s.name,
                service,
                start: nsToMs(s.startTimeUnixNano),
                end: nsToMs(s.endTimeUnixNano),
              });
            }
          }
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch {
        // Not JSON (a protobuf exporter): say so instead of silently losing spans.
        res.writeHead(415).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`,
    spans,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Environment that makes an AgentLoop process export every span to `endpoint`, quickly. */
export function otlpEnv(endpoint: string): NodeJS.ProcessEnv {
  return {
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
    OTEL_METRICS_EXPORTER: 'none',
    OTEL_BSP_SCHEDULE_DELAY: '100',
  };
}

interface Node {
  span: SpanRecord;
  children: Node[];
}

/** Time inside [start, end] not covered by any child span. */
function uncovered(node: Node): number {
  const iv = node.children.map((c) => [Math.max(c.span.start, node.span.start), Math.min(c.span.end, node.span.end)] as const).filter(([a, b]) => b > a);
  iv.sort((a, b) => a[0] - b[0]);
  let covered = 0;
  let curA = Number.NaN;
  let curB = Number.NaN;
  for (const [a, b] of iv) {
    if (Number.isNaN(curA) || a > curB) {
      if (!Number.isNaN(curA)) covered += curB - curA;
      curA = a;
      curB = b;
    } else curB = Math.max(curB, b);
  }
  if (!Number.isNaN(curA)) covered += curB - curA;
  return node.span.end - node.span.start - covered;
}

/**
 * The traces whose root span's name matches `rootName`, as a tree per trace; spans of the same
 * name under one parent are told apart by their order (`tool now #2`).
 */
function traces(spans: SpanRecord[], rootName: RegExp): Node[] {
  const byTrace = new Map<string, SpanRecord[]>();
  for (const s of spans) byTrace.set(s.traceId, [...(byTrace.get(s.traceId) ?? []), s]);
  const roots: Node[] = [];
  for (const list of byTrace.values()) {
    const nodes = new Map(list.map((s) => [s.spanId, { span: s, children: [] as Node[] }]));
    let root: Node | undefined;
    for (const n of nodes.values()) {
      const p = n.span.parentSpanId ? nodes.get(n.span.parentSpanId) : undefined;
      if (p) p.children.push(n);
      else if (rootName.test(n.span.name)) root = n;
    }
    if (!root) continue;
    const sortRec = (n: Node) => {
      n.children.sort((a, b) => a.span.start - b.span.start);
      n.children.forEach(sortRec);
    };
    sortRec(root);
    roots.push(root);
  }
  return roots.sort((a, b) => a.span.start - b.span.start);
}

/**
 * A table of the span tree: per span (by path), the median start offset from the root, the
 * median duration and the median time not covered by its children, over all matching traces.
 */
export function breakdown(spans: SpanRecord[], rootName: RegExp): { runs: number; text: string } {
  const roots = traces(spans, rootName);
  if (roots.length === 0) return { runs: 0, text: '(no trace matched)' };
  const stats = new Map<string, { offset: number[]; dur: number[]; self: number[]; gap: number[] }>();
  const order: Array<{ key: string; depth: number; label: string }> = [];
  const visit = (n: Node, rootStart: number, prefix: string, depth: number, label: string, gap: number) => {
    const key = `${prefix}/${label}`;
    let st = stats.get(key);
    if (!st) {
      st = { offset: [], dur: [], self: [], gap: [] };
      stats.set(key, st);
      order.push({ key, depth, label: `${label} [${n.span.service}]` });
    }
    st.offset.push(n.span.start - rootStart);
    st.dur.push(n.span.end - n.span.start);
    st.self.push(uncovered(n));
    st.gap.push(gap);
    const seen = new Map<string, number>();
    let prevEnd = n.span.start;
    for (const c of n.children) {
      const i = (seen.get(c.span.name) ?? 0) + 1;
      seen.set(c.span.name, i);
      visit(c, rootStart, key, depth + 1, i > 1 ? `${c.span.name} #${i}` : c.span.name, c.span.start - prevEnd);
      prevEnd = Math.max(prevEnd, c.span.end);
    }
  };
  for (const r of roots) visit(r, r.span.start, '', 0, r.span.name, 0);
  const rows = order.map(({ key, depth, label }) => {
    const st = stats.get(key)!;
    return (
      `${'  '.repeat(depth)}${label}`.padEnd(62) +
      `${fmt(median(st.offset)).padStart(9)}${fmt(median(st.gap)).padStart(9)}${fmt(median(st.dur)).padStart(9)}${fmt(median(st.self)).padStart(9)}${String(st.dur.length).padStart(5)}`
    );
  });
  const header = 'span [service]'.padEnd(62) + 'start ms'.padStart(9) + 'gap ms'.padStart(9) + 'dur ms'.padStart(9) + 'own ms'.padStart(9) + 'n'.padStart(5);
  return { runs: roots.length, text: [header, '-'.repeat(header.length), ...rows].join('\n') };
}

/**
 * Issue 9's "added cost per tool call (orchestrator → tool-runner → back, ledger included)": the
 * orchestrator's `tool <name>` span of every call in the matching traces, which covers the effect
 * ledger's claim and completion (for a tool that is not idempotent), the request to tool-runner,
 * its handler and the answer back — not the tools step's checkpoint or the model turn that follows.
 * Also the tool-runner handler's own span (`agentloop.tools.execute process`), so what the
 * round trip and the ledger add shows apart from what the tool itself does.
 */
export function toolCallCost(spans: SpanRecord[], rootName: RegExp): { calls: number; text: string } {
  // Per tool name, and within it per call of the run (the first side-effecting call of a run also
  // creates its workspace, the later ones find it), the orchestrator's span and the handler's.
  type Calls = { dur: number[]; handler: number[] };
  const byName = new Map<string, Calls[]>();
  const walk = (n: Node, inTool: Calls | undefined, seen: Map<string, number>) => {
    let here = inTool;
    if (n.span.name.startsWith('tool ')) {
      const i = seen.get(n.span.name) ?? 0;
      seen.set(n.span.name, i + 1);
      const list = byName.get(n.span.name) ?? [];
      byName.set(n.span.name, list);
      here = list[i] ??= { dur: [], handler: [] };
      here.dur.push(n.span.end - n.span.start);
    } else if (inTool && n.span.name === 'agentloop.tools.execute process') {
      inTool.handler.push(n.span.end - n.span.start);
    }
    for (const c of n.children) walk(c, here, seen);
  };
  for (const r of traces(spans, rootName)) walk(r, undefined, new Map());
  const line = (label: string, s: Calls) =>
    `  ${label}: p50 ${fmt(median(s.dur))} ms, p99 ${fmt(percentile(s.dur, 99))} ms over ${s.dur.length} calls; the tool-runner handler in it p50 ${s.handler.length ? fmt(median(s.handler)) : '–'} ms`;
  const lines: string[] = [];
  for (const [name, list] of byName) {
    lines.push(line(name, { dur: list.flatMap((c) => c.dur), handler: list.flatMap((c) => c.handler) }));
    if (list.length > 1) list.forEach((c, i) => lines.push(line(`  call ${i + 1} of the run`, c)));
  }
  const calls = [...byName.values()].flat().reduce((n, s) => n + s.dur.length, 0);
  return { calls, text: lines.length ? lines.join('\n') : '  (no tool span)' };
}
