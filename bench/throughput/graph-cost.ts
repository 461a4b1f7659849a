/**
 * The agent graph alone, in this process: the bench's run (a user message, two `now` tool calls,
 * an answer) through `buildAgentGraph` over a MemorySaver, the scripted model, an in-memory tool
 * client and an approval client that allows — no store, bus, HTTP or SQLite. Prints, per run, what
 * the orchestrator's graph asks of LangChain and LangGraph as counts (steady on a shared machine)
 * and the process CPU time (not steady: compare alternated runs only).
 *
 *   npx tsx --conditions=@agentloop/source bench/throughput/graph-cost.ts [--runs 400] [--root DIR] [--profile FILE]
 *
 * `--root`: import the graph from another copy of the repository (e.g. the directory `--snapshot
 * REF` of `bench:throughput` extracted), so a commit can be compared with this tree.
 * `--peer`: the peer's graph instead (bench/throughput/peer-graph/graph.ts: an agent node and a
 * prebuilt ToolNode, the same run) over a MemorySaver, without AgentLoop's graph in the process (its
 * LangChain run context replacement is then not installed, unless `--light-context`): LangGraph's
 * own floor for this run.
 * `--profile FILE`: a V8 CPU profile (250 µs) of the timed runs only — not start-up, module loading or
 * warm-up — for `profile-summary.ts FILE --runs N`.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { MemorySaver } from '@langchain/langgraph';
import { HumanMessage } from '@langchain/core/messages';
import { create, ToolMetadataSchema, ToolSpecSchema } from '@agentloop/proto';
import { silentLogger } from '@agentloop/core';
import { startProfile } from './inspector-profile.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '400' },
    root: { type: 'string' },
    profile: { type: 'string' },
    peer: { type: 'boolean', default: false },
    'light-context': { type: 'boolean', default: false },
  },
});
const RUNS = Number(values.runs);
const root = path.resolve(values.root ?? path.join(import.meta.dirname, '../..'));
const src = (p: string) => import(pathToFileURL(path.join(root, 'services/orchestrator/src', p)).href);

const { buildAgentGraph } = (await src('graph.ts')) as typeof import('../../services/orchestrator/src/graph.js');
const { ScriptedChatModel } = (await src('models/scripted.ts')) as typeof import('../../services/orchestrator/src/models/scripted.js');
const { AgentConfigurable } = (await src('agent-config-schema.ts')) as typeof import('../../services/orchestrator/src/agent-config-schema.js');
// LangChain as that copy loads it (a snapshot has its own node_modules: other module instances).
const core = (p: string) => import(pathToFileURL(path.join(root, 'node_modules/@langchain/core/dist', p)).href);
const { CallbackManager } = (await core('callbacks/manager.js')) as typeof import('@langchain/core/callbacks/manager');
const { RunnableLambda } = (await core('runnables/base.js')) as typeof import('@langchain/core/runnables');

const now = create(ToolSpecSchema, {
  name: 'now',
  description: 'The current time',
  parametersJsonSchema: '{"type":"object","properties":{}}',
  metadata: create(ToolMetadataSchema, { idempotent: true }),
});
const tools = {
  listTools: () => Promise.resolve([now]),
  execute: () => Promise.resolve({ content: new Date(0).toISOString(), isError: false }),
};
const approvals = {
  check: () => Promise.resolve({ action: 'allow' as const, reason: 'read-only', risk_level: 'low' as const, rule: 'default' }),
  record: () => Promise.resolve(),
};
const turns = [{ tool_calls: [{ name: 'now', args: {} }] }, { tool_calls: [{ name: 'now', args: {} }] }, { content: 'It is now.' }];
// The run config the executor hands the graph: the request's configurable (agent-config.ts parses it).
const runConfig = { configurable: { model: { provider: 'scripted', turns }, delay_ms: 0 } };

// Before AgentLoop's graph is built: building it installs its LangChain run context (langchain-context.ts).
if (values.peer && values['light-context'])
  ((await src('langchain-context.ts')) as typeof import('../../services/orchestrator/src/langchain-context.js')).installLightRunContext();
const peer = values.peer ? (await import('./peer-graph/graph.js')).graph.builder.compile({ checkpointer: new MemorySaver() }) : undefined;
const contexts = new Map<string, unknown>();
const logger = silentLogger();
const graph = peer
  ? undefined
  : buildAgentGraph({
      tools: tools as never,
      approvals: approvals as never,
      checkpointer: new MemorySaver(),
      runContext: (id) => contexts.get(id) as never,
    });

async function run(i: number): Promise<void> {
  const runId = `r${i}`;
  if (peer) {
    const stream = await peer.stream(
      { messages: [new HumanMessage('What time is it?')] },
      { configurable: { thread_id: `th${i}`, run_id: runId }, streamMode: ['values', 'updates'], durability: 'sync' },
    );
    let last: unknown;
    for await (const chunk of stream) last = chunk;
    const messages = ((last as [string, { messages?: unknown[] }])[1].messages ?? []).length;
    if (messages !== 6) throw new Error(`run ${i}: ${messages} messages, expected 6`);
    return;
  }
  contexts.set(runId, {
    runId,
    tenantId: 't1',
    threadId: `th${i}`,
    runConfig: JSON.parse(JSON.stringify(runConfig)),
    model: { model: new ScriptedChatModel(turns), label: 'scripted', provider: 'scripted', modelId: 'scripted' },
    logger,
    signal: new AbortController().signal,
  });
  const stream = await graph!.stream(
    { messages: [new HumanMessage('What time is it?')], loops: 0, max_loops: 10, context_id: runId },
    { configurable: { thread_id: `th${i}`, run_id: runId }, streamMode: ['values', 'updates'], durability: 'sync' },
  );
  let last: unknown;
  for await (const chunk of stream) last = chunk;
  const messages = ((last as [string, { messages?: unknown[] }])[1].messages ?? []).length;
  if (messages !== 6) throw new Error(`run ${i}: ${messages} messages, expected 6`);
  contexts.delete(runId);
}

/** Counts calls of `obj[key]` while `fn` runs. */
function counting<T extends object>(obj: T, key: keyof T, counts: Map<string, number>, name: string): () => void {
  const original = obj[key] as (...a: unknown[]) => unknown;
  (obj as Record<keyof T, unknown>)[key] = function (this: unknown, ...a: unknown[]) {
    counts.set(name, (counts.get(name) ?? 0) + 1);
    return original.apply(this, a);
  };
  return () => void ((obj as Record<keyof T, unknown>)[key] = original);
}

for (let i = 0; i < 50; i++) await run(-1 - i); // warm-up
const NAMES = [
  'LangChain CallbackManager configured',
  'RunnableLambda invokes',
  'agent configurable validated (zod)',
  'LangGraph EmptyChannelError thrown (an empty EphemeralValue channel checkpointed)',
  'crypto.getRandomValues calls (LangChain uuid v1/v6/v7)',
] as const;
const counts = new Map<string, number>(NAMES.map((n) => [n, 0]));
// LangGraph's own per-run work, counted on the graph's channels (the package does not export the class).
const compiled = (peer ?? graph) as unknown as { channels: Record<string, object> };
const ephemeral = Object.values(compiled.channels).find((c) => c.constructor.name === 'EphemeralValue');
const throwing = (proto: { checkpoint: () => unknown }, name: string): (() => void) => {
  const original = proto.checkpoint;
  proto.checkpoint = function (this: unknown) {
    try {
      return original.call(this);
    } catch (err) {
      counts.set(name, (counts.get(name) ?? 0) + 1);
      throw err;
    }
  };
  return () => void (proto.checkpoint = original);
};
const restore = [
  counting(CallbackManager, '_configureSync', counts, NAMES[0]),
  counting(RunnableLambda.prototype, 'invoke', counts, NAMES[1]),
  counting(AgentConfigurable, 'safeParse', counts, NAMES[2]),
  ...(ephemeral ? [throwing(Object.getPrototypeOf(ephemeral) as { checkpoint: () => unknown }, NAMES[3])] : []),
  counting(globalThis.crypto, 'getRandomValues', counts, NAMES[4]),
];
await run(0);
restore.forEach((r) => r());
const stopProfile = values.profile ? await startProfile(values.profile) : undefined;
const cpu0 = process.cpuUsage();
const t0 = performance.now();
for (let i = 1; i <= RUNS; i++) await run(i);
const cpu = process.cpuUsage(cpu0);
const wall = performance.now() - t0;
await stopProfile?.();
console.log(`graph-cost: ${peer ? `the peer graph (LangGraph alone${values['light-context'] ? ", AgentLoop's LangChain run context" : ''})` : root}`);
for (const [k, v] of counts) console.log(`  ${k}: ${v} per run`);
console.log(`  CPU ${((cpu.user + cpu.system) / 1000 / RUNS).toFixed(3)} ms per run, wall ${(wall / RUNS).toFixed(3)} ms per run (${RUNS} runs)`);
