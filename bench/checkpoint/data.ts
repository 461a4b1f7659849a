/**
 * A deterministic, LangGraph-shaped workload: `threads` conversations of
 * `steps` agent-loop steps each. Every step appends an AI message with a tool
 * call and the tool's answer (a few hundred bytes each) to the `messages`
 * channel, so the checkpointed state grows over the thread as it does in a
 * real agent run; the branch channel alternates between agent and tools.
 * Each step also has one task writing 2 pending writes (`putWrites`).
 */
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { seededRandom } from './harness.js';
import { uuid6, type ChannelVersions, type Checkpoint, type CheckpointMetadata, type PendingWrite } from '@langchain/langgraph-checkpoint';

export interface StepData {
  threadId: string;
  step: number;
  /** Config passed to put(): the parent checkpoint's id (none for step 0). */
  parentId: string | undefined;
  checkpoint: Checkpoint;
  metadata: CheckpointMetadata;
  newVersions: ChannelVersions;
  /** putWrites() against this checkpoint: one task, 2 writes. */
  taskId: string;
  writes: PendingWrite[];
}

export interface Workload {
  threads: string[];
  /** Steps of each thread in order, by thread id. */
  steps: Map<string, StepData[]>;
  /** Mean serialized size of one message, in bytes (for the report). */
  meanMessageBytes: number;
}

const WORDS =
  'the agent reads a file and then calls a tool to search the index for matching documents before it answers with a short summary of what was found in the workspace including dates names totals and a list of follow up questions for the user'.split(
    ' ',
  );

function sentence(rand: () => number, bytes: number): string {
  const out: string[] = [];
  let n = 0;
  while (n < bytes) {
    const w = WORDS[Math.floor(rand() * WORDS.length)]!;
    out.push(w);
    n += w.length + 1;
  }
  return out.join(' ');
}

export function generateWorkload(opts: { threads: number; steps: number; prefix: string; seed?: number }): Workload {
  const rand = seededRandom(opts.seed ?? 42);
  const threads = Array.from({ length: opts.threads }, (_, i) => `${opts.prefix}-${String(i).padStart(3, '0')}`);
  const steps = new Map<string, StepData[]>();
  let messageBytes = 0;
  let messageCount = 0;
  const track = (m: BaseMessage) => {
    messageBytes += JSON.stringify(m).length;
    messageCount++;
    return m;
  };

  // Generate step-major (step 0 of every thread, then step 1, ...) so uuid6 ids stay increasing per thread.
  const state = threads.map((threadId) => ({ threadId, messages: [] as BaseMessage[], parentId: undefined as string | undefined, list: [] as StepData[] }));
  for (const s of state) steps.set(s.threadId, s.list);
  for (let step = 0; step < opts.steps; step++) {
    for (const s of state) {
      if (step === 0) {
        s.messages.push(track(new HumanMessage({ content: sentence(rand, 200 + Math.floor(rand() * 200)), id: `h-${s.threadId}` })));
      } else {
        const callId = `call_${s.threadId}_${step}`;
        s.messages.push(
          track(
            new AIMessage({
              content: sentence(rand, 150 + Math.floor(rand() * 250)),
              id: `ai-${s.threadId}-${step}`,
              tool_calls: [{ id: callId, name: 'search_documents', args: { query: sentence(rand, 40), limit: 5 }, type: 'tool_call' }],
              usage_metadata: { input_tokens: 800 + step * 120, output_tokens: 60, total_tokens: 860 + step * 120 },
            }),
          ),
          track(
            new ToolMessage({
              content: sentence(rand, 200 + Math.floor(rand() * 300)),
              tool_call_id: callId,
              name: 'search_documents',
              id: `tool-${s.threadId}-${step}`,
            }),
          ),
        );
      }
      const version = step + 1;
      const branch = step % 2 === 0 ? 'branch:to:agent' : 'branch:to:tools';
      const channelVersions: ChannelVersions = {
        __start__: 1,
        messages: version,
        'branch:to:agent': step % 2 === 0 ? version : Math.max(step, 1),
        ...(step > 0 ? { 'branch:to:tools': step % 2 === 1 ? version : step } : {}),
      };
      const checkpoint: Checkpoint = {
        v: 4,
        id: uuid6(-1),
        ts: new Date(Date.UTC(2025, 0, 1, 0, 0, step)).toISOString(),
        channel_values: { messages: [...s.messages], [branch]: null },
        channel_versions: channelVersions,
        versions_seen: {
          __input__: {},
          __start__: { __start__: 1 },
          agent: { 'branch:to:agent': step % 2 === 0 ? version : step },
          ...(step > 0 ? { tools: { 'branch:to:tools': step % 2 === 1 ? version : step } } : {}),
        },
      };
      const metadata: CheckpointMetadata = { source: step === 0 ? 'input' : 'loop', step, parents: {} };
      const reply = new AIMessage({ content: sentence(rand, 150 + Math.floor(rand() * 250)), id: `w-${s.threadId}-${step}` });
      const data: StepData = {
        threadId: s.threadId,
        step,
        parentId: s.parentId,
        checkpoint,
        metadata,
        newVersions: { messages: version, [branch]: channelVersions[branch]! },
        taskId: `task-${s.threadId}-${step}`,
        writes: [
          ['messages', [reply]],
          [step % 2 === 0 ? 'branch:to:tools' : 'branch:to:agent', null],
        ],
      };
      s.list.push(data);
      s.parentId = checkpoint.id;
    }
  }
  return { threads, steps, meanMessageBytes: Math.round(messageBytes / Math.max(messageCount, 1)) };
}
