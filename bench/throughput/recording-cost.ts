/**
 * What recording a run costs the orchestrator's thread (issue 9): the run recorder of an AgentLoop
 * tree records N copies of the bench's 3-step run (3 model calls offering the tools of
 * tests/replays/read-note.json, 2 tool calls) into a SQLite file store; prints CPU ms per run and
 * the bytes stored per run. `--root DIR` measures another tree (e.g. a `--snapshot` copy made by
 * run.ts), so the recorder of a commit before a change can be measured beside the current one:
 *
 *   npx tsx --conditions=@agentloop/source bench/throughput/recording-cost.ts [--root DIR] [--runs N]
 */
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { silentLogger } from '@agentloop/core';

const { values } = parseArgs({ options: { root: { type: 'string', default: process.cwd() }, runs: { type: 'string', default: '1000' } } });
const root = path.resolve(values.root);
const runs = Number(values.runs);

interface Recorder {
  modelCall(r: unknown): Promise<void>;
  toolCall(step: number, call: unknown, execute: () => Promise<unknown>): Promise<unknown>;
}
interface Store {
  migrate(): Promise<void>;
  close(): Promise<void>;
}
const load = (rel: string) => import(pathToFileURL(path.join(root, rel)).href);
const { RunRecorder } = (await load('services/orchestrator/src/recording/recorder.ts')) as {
  RunRecorder: new (store: Store, run: { tenantId: string; runId: string }, log: unknown) => Recorder;
};
const { createSqliteStore } = (await load('libs/store/src/sqlite.ts')) as { createSqliteStore: (o: { path: string }) => Store };

const fixture = JSON.parse(readFileSync(path.join(root, 'tests/replays/read-note.json'), 'utf8')) as {
  events: Array<{ request: { tools: Array<{ name: string; description: string; parameters: string }>; messages: Array<{ content: string }> } }>;
};
// One list of spec objects for every run, as the tool client's cached list gives them.
const tools = fixture.events[0]!.request.tools.map((t) => ({ name: t.name, description: t.description, parametersJsonSchema: t.parameters }));
const system = fixture.events[0]!.request.messages[0]!.content;
const model = { label: 'scripted', provider: 'scripted', modelId: 'scripted' };

/** The bench's run: the system prompt is built anew for each call, the history's messages are kept. */
async function recordRun(recorder: Recorder, i: number): Promise<void> {
  const human = new HumanMessage({ content: 'What time is it? Ask twice.', id: `h-${i}` });
  const call = (n: number) => new AIMessage({ content: '', id: `a${n}-${i}`, tool_calls: [{ id: `c${n}-${i}`, name: 'now', args: {}, type: 'tool_call' }] });
  const result = (n: number) => new ToolMessage({ content: `2026-11-24T07:00:0${n}Z`, tool_call_id: `c${n}-${i}`, id: `t${n}-${i}` });
  const [a1, t1, a2, t2] = [call(1), result(1), call(2), result(2)];
  const answer = new AIMessage({ content: 'It is now.', id: `a3-${i}` });
  const turn = async (n: number, history: unknown[], response: AIMessage) =>
    recorder.modelCall({ turn: n, model, tools, messages: [new SystemMessage(system), ...history], response, startedAt: new Date() });
  const tool = (n: number) => recorder.toolCall(n - 1, { id: `c${n}-${i}`, name: 'now', args: {} }, () => Promise.resolve({ content: 'now', isError: false }));
  await turn(0, [human], a1);
  await tool(1);
  await turn(1, [human, a1, t1], a2);
  await tool(2);
  await turn(2, [human, a1, t1, a2, t2], answer);
}

const file = path.join(tmpdir(), `agentloop-recording-cost-${process.pid}.sqlite`);
const store = createSqliteStore({ path: file });
await store.migrate();
for (let i = 0; i < 200; i++) await recordRun(new RunRecorder(store, { tenantId: 't', runId: `warm-${i}` }, silentLogger()), -1 - i);
const before = process.cpuUsage();
for (let i = 0; i < runs; i++) await recordRun(new RunRecorder(store, { tenantId: 't', runId: `run-${i}` }, silentLogger()), i);
const used = process.cpuUsage(before);
await store.close();
const db = new BetterSqlite3(file, { readonly: true });
const bytes = (sql: string) => Number((db.prepare(sql).get() as { n: number | null }).n ?? 0);
const eventBytes = bytes("select sum(length(payload)) n from run_recordings where run_id like 'run-%'");
const hasToolsets = bytes("select count(*) n from sqlite_master where name = 'run_recording_toolsets'") > 0;
const toolsetBytes = hasToolsets ? bytes('select sum(length(tools)) n from run_recording_toolsets') : 0;
db.close();
for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
console.log(
  `${root}: ${runs} runs recorded, ${((used.user + used.system) / 1000 / runs).toFixed(3)} ms CPU per run, ` +
    `${Math.round(eventBytes / runs)} bytes of events per run, ${toolsetBytes} bytes of tool sets in all`,
);
