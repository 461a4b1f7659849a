/**
 * Summarizes a V8 CPU profile (`.cpuprofile`, as `node --cpu-prof` or the inspector writes it):
 * self time by function, by file and by package, and inclusive time by function, each as a share
 * of the busy (non-idle) time and, given the number of runs profiled, in ms per run.
 *
 *   npx tsx bench/throughput/profile-summary.ts <file.cpuprofile> [--runs N] [--top 25]
 *   npx tsx bench/throughput/profile-summary.ts <file.cpuprofile> --callers 'run_trees.mjs:RunTree' [--depth 8]
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { fmt, formatTable } from './stats.js';

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Where a frame's code lives: an npm package, an AgentLoop package, Node itself, or V8. */
export function packageOf(frame: CallFrame): string {
  const url = frame.url;
  if (url === '') {
    if (frame.functionName === '(garbage collector)') return '(garbage collector)';
    if (frame.functionName === '(program)' || frame.functionName === '(idle)' || frame.functionName === '(root)') return frame.functionName;
    return '(native / V8 builtins)';
  }
  if (url.startsWith('node:')) return 'node (internals)';
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const parts = url.slice(nm + '/node_modules/'.length).split('/');
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  const m = /\/(libs|services|apps)\/([^/]+)\//.exec(url);
  if (m) return `@agentloop/${m[2]} (repo)`;
  if (url.includes('/bench/')) return 'bench (repo)';
  return 'other';
}

/**
 * `services/orchestrator/src/graph.ts` or `@langchain/core/dist/…/base.js`, short and stable
 * (also for a snapshot of the repository elsewhere, see snapshot.ts).
 */
export function fileOf(url: string): string {
  if (url === '') return '(no file)';
  const p = url.replace(/^file:\/\//, '');
  const nm = p.lastIndexOf('/node_modules/');
  if (nm >= 0) return p.slice(nm + '/node_modules/'.length);
  if (p.startsWith(repoRoot + '/')) return p.slice(repoRoot.length + 1);
  const m = /\/((?:libs|services|apps|bench)\/.*)$/.exec(p);
  return m ? m[1]! : p;
}

/** AgentLoop's own code (not a dependency, not the bench). */
function isAgentLoop(f: CallFrame): boolean {
  return f.url !== '' && !f.url.includes('/node_modules/') && /\/(libs|services|apps)\//.test(f.url);
}

function frameKey(f: CallFrame): string {
  const name = f.functionName || '(anonymous)';
  // Line numbers are those of the code V8 ran (tsx's output for .ts files): close, not exact.
  return f.url === '' ? name : `${fileOf(f.url)}:${name}${f.functionName ? '' : `@${f.lineNumber + 1}`}`;
}

/**
 * Cost centres: a sample belongs to the first centre (in this order) that has a frame anywhere
 * on its stack, so specific work (a checkpoint write) wins over the loop that called it (LangGraph).
 */
/**
 * Centres whose frames wrap other work rather than do it: with tracing off `withSpan` stays on the
 * stack while its callback (a graph node, a tool call) runs, and the in-process bus's dispatch is
 * under every handler it delivers to (the tool-runner's, the approval service's). They get a sample
 * only when no other centre's frame is inside them on its stack (from 2026-11-24 20:00; the
 * profiles before charged the whole wrapped work to them).
 */
const WRAPPER_CENTRES = new Set(['OpenTelemetry (withSpan, context API)', 'bus + run events (libs/bus)']);

export const COST_CENTRES: Array<[string, RegExp]> = [
  ['checkpoints: SqliteSaver put/putWrites/getTuple + serde', /@langchain\/langgraph-checkpoint-sqlite\/|@langchain\/langgraph-checkpoint\/dist\/serde\//],
  ['workspace fs: libs/workspace (ensure, recordRunStart...)', /\/libs\/workspace\//],
  ['tool-runner replay log (begin/complete)', /\/services\/tool-runner\/src\/replay-log/],
  ['records + effect ledger: libs/store (kysely, better-sqlite3)', /\/libs\/store\/|\/kysely\/|\/better-sqlite3\//],
  ['LangSmith (RunTree, tracer callbacks)', /\/node_modules\/langsmith\//],
  ['OpenTelemetry (withSpan, context API)', /\/libs\/telemetry\/|@opentelemetry\//],
  ['logging (pino)', /\/node_modules\/(pino|pino-std-serializers|sonic-boom|thread-stream)\//],
  ['protobuf codec', /@bufbuild\/protobuf\/|\/libs\/proto\//],
  ['queue (libs/queue)', /\/libs\/queue\//],
  ['bus + run events (libs/bus)', /\/libs\/bus\//],
  ['approval service', /\/services\/approval\//],
  ['tool-runner (other)', /\/services\/tool-runner\//],
  ['HTTP: fastify + gateway routes', /\/node_modules\/(fastify|find-my-way|avvio|light-my-request|@fastify\/[^/]+)\/|\/services\/gateway\//],
  ['zod validation', /\/node_modules\/zod\//],
  ['orchestrator (graph nodes, run executor, other)', /\/services\/orchestrator\//],
  ['LangGraph Pregel loop (@langchain/langgraph)', /@langchain\/langgraph\/dist\//],
  ['LangChain core (runnables, messages, callbacks)', /@langchain\/core\//],
];

export interface Summary {
  /** Profiled wall time, ms. */
  wallMs: number;
  /** Sampled time that was not idle, ms. */
  busyMs: number;
  idleMs: number;
  selfByFunction: Array<[string, number]>;
  selfByFile: Array<[string, number]>;
  selfByPackage: Array<[string, number]>;
  inclusiveByFunction: Array<[string, number]>;
  inclusiveByPackageEntry: Array<[string, number]>;
  /**
   * Each sample charged to the innermost AgentLoop function on its stack: what that function
   * costs itself plus the library and native code it calls directly (not through another
   * AgentLoop function). Samples with no AgentLoop frame are charged to `(outside: <package>)`
   * of their outermost JavaScript frame.
   */
  byAgentLoopFrame: Array<[string, number]>;
  byCostCentre: Array<[string, number]>;
}

export function summarize(profile: CpuProfile): Summary {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  // Time per sample: V8 records the delta before each sample; attribute it to that sample's node.
  const selfTime = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    const dt = Math.max(0, (profile.timeDeltas[i + 1] ?? 0) / 1000);
    selfTime.set(id, (selfTime.get(id) ?? 0) + dt);
  }
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  const selfByFunction = new Map<string, number>();
  const selfByFile = new Map<string, number>();
  const selfByPackage = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const inclusivePkg = new Map<string, number>();
  const byAgentLoopFrame = new Map<string, number>();
  const byCostCentre = new Map<string, number>();
  let idleMs = 0;
  let busyMs = 0;
  for (const [id, ms] of selfTime) {
    const node = byId.get(id)!;
    const f = node.callFrame;
    if (f.functionName === '(idle)') {
      idleMs += ms;
      continue;
    }
    busyMs += ms;
    // A native function (a C++ binding such as better-sqlite3's Statement#run or fs' mkdir, or a
    // V8 builtin) has no file: name it after its nearest JavaScript caller.
    let caller: CallFrame | undefined;
    let own: CallFrame | undefined;
    let outermostJs: CallFrame | undefined;
    for (let cur = parent.get(id); cur !== undefined; cur = parent.get(cur)) {
      const cf = byId.get(cur)!.callFrame;
      if (cf.url !== '') {
        caller ??= cf;
        outermostJs = cf;
      }
    }
    for (let cur: number | undefined = id; cur !== undefined && !own; cur = parent.get(cur)) {
      const cf = byId.get(cur)!.callFrame;
      if (isAgentLoop(cf)) own = cf;
    }
    const native = f.url === '' && packageOf(f) === '(native / V8 builtins)';
    const fnKey = native && caller ? `native ${f.functionName || '(anonymous)'} ← ${frameKey(caller)}` : frameKey(f);
    const pkg = native && caller ? `${packageOf(caller)} (native calls)` : packageOf(f);
    add(selfByFunction, fnKey, ms);
    add(selfByFile, f.url !== '' ? fileOf(f.url) : native && caller ? `${fileOf(caller.url)} (native calls)` : `(${packageOf(f)})`, ms);
    add(selfByPackage, pkg, ms);
    const urls: string[] = [];
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) urls.push(byId.get(cur)!.callFrame.url);
    // A wrapper centre only gets the samples where it is the innermost centre on the stack.
    const innermost = urls.find((u) => COST_CENTRES.some(([, re]) => re.test(u)));
    const centre =
      f.functionName === '(garbage collector)' || f.functionName === '(program)'
        ? f.functionName
        : (COST_CENTRES.find(([name, re]) => (WRAPPER_CENTRES.has(name) ? innermost !== undefined && re.test(innermost) : urls.some((u) => re.test(u))))?.[0] ??
          `other: ${packageOf(outermostJs ?? f)}`);
    add(byCostCentre, centre, ms);
    add(byAgentLoopFrame, own ? frameKey(own) : f.url === '' && !caller ? `(${packageOf(f)})` : `(outside AgentLoop code: ${packageOf(outermostJs ?? f)})`, ms);
    // Inclusive: every distinct function and package on the stack gets the sample once.
    const seen = new Set<string>();
    const seenPkg = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const cf = byId.get(cur)!.callFrame;
      if (cf.functionName === '(root)') break;
      const k = frameKey(cf);
      if (!seen.has(k)) {
        seen.add(k);
        add(inclusive, k, ms);
      }
      const pkg = packageOf(cf);
      if (!seenPkg.has(pkg)) {
        seenPkg.add(pkg);
        add(inclusivePkg, pkg, ms);
      }
    }
  }
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return {
    wallMs: (profile.endTime - profile.startTime) / 1000,
    busyMs,
    idleMs,
    selfByFunction: sorted(selfByFunction),
    selfByFile: sorted(selfByFile),
    selfByPackage: sorted(selfByPackage),
    inclusiveByFunction: sorted(inclusive),
    inclusiveByPackageEntry: sorted(inclusivePkg),
    byAgentLoopFrame: sorted(byAgentLoopFrame),
    byCostCentre: sorted(byCostCentre),
  };
}

/**
 * Who calls the functions matching `pattern` (a regex over `file:function` keys): the distinct
 * caller chains (up to `depth` frames above the matching frame), ranked by the time under them.
 */
export function callers(profile: CpuProfile, pattern: RegExp, depth = 8, top = 10): string {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const chains = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const ms = Math.max(0, (profile.timeDeltas[i + 1] ?? 0) / 1000);
    let cur: number | undefined = profile.samples[i]!;
    while (cur !== undefined && !pattern.test(frameKey(byId.get(cur)!.callFrame))) cur = parent.get(cur);
    if (cur === undefined) continue;
    const chain: string[] = [];
    for (let c: number | undefined = cur; c !== undefined && chain.length <= depth; c = parent.get(c)) {
      const f = byId.get(c)!.callFrame;
      if (f.functionName === '(root)') break;
      chain.push(frameKey(f));
    }
    chains.set(chain.join('\n    ← '), (chains.get(chain.join('\n    ← ')) ?? 0) + ms);
    total += ms;
  }
  const rows = [...chains].sort((a, b) => b[1] - a[1]).slice(0, top);
  return [`${fmt(total)} ms under frames matching ${pattern}`, ...rows.map(([chain, ms]) => `${fmt(ms).padStart(8)} ms  ${chain}`)].join('\n');
}

/** The summary as text tables; `runs` (runs completed while profiling) adds a ms-per-run column. */
export function formatSummary(s: Summary, opts: { runs?: number; top?: number } = {}): string {
  const top = opts.top ?? 25;
  const table = (title: string, rows: Array<[string, number]>, n: number) => {
    const header = [title, 'ms', '% busy', ...(opts.runs ? ['ms/run'] : [])];
    return formatTable(
      header,
      rows.slice(0, n).map(([k, ms]) => [k, fmt(ms), fmt((100 * ms) / s.busyMs), ...(opts.runs ? [fmt(ms / opts.runs)] : [])]),
    );
  };
  const lines = [
    `profiled ${fmt(s.wallMs)} ms wall; busy ${fmt(s.busyMs)} ms (${fmt((100 * s.busyMs) / (s.busyMs + s.idleMs))}% of samples), idle ${fmt(s.idleMs)} ms` +
      (opts.runs ? `; ${opts.runs} runs → ${fmt(s.busyMs / opts.runs)} ms of main-thread CPU per run` : ''),
    '',
    'Cost centres (a sample goes to the first centre in COST_CENTRES order with a frame on its stack; OpenTelemetry and the bus only where innermost)',
    table('cost centre', s.byCostCentre, 30),
    '',
    'Charged to the innermost AgentLoop function on the stack (its own code + the library/native code it calls directly)',
    table('file:function', s.byAgentLoopFrame, top),
    '',
    'Self time by package (native code under the package that calls it)',
    table('package', s.selfByPackage, 20),
    '',
    'Inclusive time by package (a sample counts once per package on its stack)',
    table('package', s.inclusiveByPackageEntry, 20),
    '',
    'Self time by function',
    table('file:function', s.selfByFunction, top),
    '',
    'Self time by file',
    table('file', s.selfByFile, top),
    '',
    'Inclusive time by function (AgentLoop code only)',
    table(
      'file:function',
      s.inclusiveByFunction.filter(([k]) => /^(libs|services|apps)\//.test(k)),
      top,
    ),
    '',
    'Inclusive time by function (all)',
    table('file:function', s.inclusiveByFunction, top),
  ];
  return lines.join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { runs: { type: 'string' }, top: { type: 'string', default: '25' }, callers: { type: 'string' }, depth: { type: 'string', default: '8' } },
  });
  const file = positionals[0];
  if (!file) {
    console.error('usage: profile-summary.ts <file.cpuprofile> [--runs N] [--top 25] [--callers REGEX [--depth 8]]');
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  if (values.callers) console.log(callers(profile, new RegExp(values.callers), Number(values.depth), Number(values.top)));
  else console.log(formatSummary(summarize(profile), { runs: values.runs ? Number(values.runs) : undefined, top: Number(values.top) }));
}
