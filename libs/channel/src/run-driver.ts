import type { Client, Config } from '@langchain/langgraph-sdk';
import type { Channel, ToolActivity, ToolOutcome } from './channel.js';
import { answerInterrupt, interruptsOf, type PendingInterrupt } from './interrupts.js';
import { displayNameOf } from './tool-names.js';

/** Stream modes a channel asks for: tokens, step updates (tool calls), final values, tool progress. */
export const CHANNEL_STREAM_MODES = ['messages-tuple', 'updates', 'values', 'tools'] as const;

export interface RunSettings {
  assistantId: string;
  /** Run config sent with every run (e.g. `configurable`), or a function giving each run's (resumes are runs too). */
  config?: Config | (() => Config | undefined);
}

/** How a turn ended. */
export interface TurnOutcome {
  status: 'done' | 'interrupted' | 'cancelled' | 'error';
  /** The last state values the run streamed. */
  values?: Record<string, unknown>;
  error?: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

/** Text of a message's content (a string, or text parts). */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (isObj(p) && p.type === 'text' && typeof p.text === 'string' ? p.text : '')).join('');
}

const isAi = (m: Obj) => m.type === 'ai' || m.type === 'AIMessageChunk' || m.role === 'assistant';
const isTool = (m: Obj) => m.type === 'tool' || m.role === 'tool';

/**
 * One person's turn on a thread, streamed to a channel: tokens as they come, tool calls by display
 * name while they run, approvals and `ask_human` questions answered through the channel and resumed
 * (`command.resume`), until the run ends. `cancel()` cancels the run on the server.
 */
export class RunDriver {
  private runId: string | undefined;
  private threadId: string | undefined;
  private cancelled = false;
  private readonly running = new Map<string, ToolActivity>();
  /** Tool calls announced before the run stopped for a person: announced again when it resumes. */
  private paused: ToolActivity[] = [];
  /** Text streamed per AI message id, so the whole answer can be handed over once the step ends. */
  private readonly streamed = new Map<string, string>();
  private readonly finished = new Set<string>();

  constructor(
    private readonly client: Client,
    private readonly channel: Channel,
    private readonly settings: RunSettings,
  ) {}

  /** Sends `input` (or resumes with `command`) and follows the run, answering its interrupts. */
  async run(threadId: string, first: { input: Obj } | { command: Obj }): Promise<TurnOutcome> {
    this.threadId = threadId;
    let payload: { input?: Obj; command?: Obj } = first;
    for (;;) {
      const outcome = await this.streamOnce(threadId, payload);
      if (this.cancelled) return { ...outcome, status: 'cancelled' };
      if (outcome.status !== 'interrupted' || !outcome.interrupt) return outcome;
      const resume = await answerInterrupt(this.channel, outcome.interrupt, threadId);
      if (this.cancelled) return { ...outcome, status: 'cancelled' };
      if (resume === undefined) return outcome;
      payload = { command: { resume } };
    }
  }

  /** Asks the person about an interrupt the thread already waits on, then resumes with the answer (when given now). */
  async answer(threadId: string, interrupt: PendingInterrupt): Promise<TurnOutcome> {
    const resume = await answerInterrupt(this.channel, interrupt, threadId);
    if (resume === undefined) return { status: 'interrupted' };
    return this.run(threadId, { command: { resume } });
  }

  /** Cancels the run in progress (Ctrl-C); a turn waiting for a person just stops. */
  async cancel(): Promise<void> {
    this.cancelled = true;
    if (this.threadId && this.runId) await this.client.runs.cancel(this.threadId, this.runId).catch(() => undefined);
  }

  private async streamOnce(threadId: string, payload: { input?: Obj; command?: Obj }): Promise<TurnOutcome & { interrupt?: PendingInterrupt }> {
    this.runId = undefined;
    let values: Obj | undefined;
    // The last `values` event decides: a resumed run's first one still shows the interrupt it answers.
    let interrupts: PendingInterrupt[] = [];
    for (const tool of this.paused.splice(0)) {
      this.running.set(tool.id ?? tool.name, tool);
      this.channel.toolStarted(tool);
    }
    const stream = this.client.runs.stream(threadId, this.settings.assistantId, {
      ...payload,
      streamMode: [...CHANNEL_STREAM_MODES],
      ...this.configOfRun(),
      onRunCreated: ({ run_id }) => {
        this.runId = run_id;
      },
    });
    try {
      for await (const chunk of stream) {
        const data: unknown = chunk.data;
        switch (chunk.event) {
          case 'metadata':
            if (isObj(data) && typeof data.run_id === 'string') this.runId = data.run_id;
            break;
          case 'messages':
            this.onToken(data);
            break;
          case 'updates':
            await this.onUpdate(data);
            break;
          case 'values':
            if (isObj(data) && Object.keys(data).some((k) => k !== '__interrupt__')) values = data;
            interrupts = interruptsOf(data);
            break;
          case 'tools':
            this.onToolEvent(data);
            break;
          case 'error':
            this.stopTools('error');
            return { status: 'error', ...(values ? { values } : {}), error: describeError(data) };
          default:
            break;
        }
      }
    } catch (err) {
      this.stopTools('stopped');
      if (this.cancelled) return { status: 'cancelled', ...(values ? { values } : {}) };
      throw err;
    }
    const interrupt = interrupts[0];
    if (interrupt) this.paused = [...this.running.values()];
    this.stopTools(interrupt || this.cancelled ? 'stopped' : 'ok');
    await this.flushAnswers(values);
    return interrupt ? { status: 'interrupted', ...(values ? { values } : {}), interrupt } : { status: 'done', ...(values ? { values } : {}) };
  }

  private configOfRun(): { config?: Config } {
    const c = typeof this.settings.config === 'function' ? this.settings.config() : this.settings.config;
    return c ? { config: c } : {};
  }

  /** messages-tuple: `[message_chunk, metadata]`; only the assistant's text goes to the person. */
  private onToken(data: unknown): void {
    if (!Array.isArray(data) || !isObj(data[0])) return;
    const msg = data[0];
    if (!isAi(msg)) return;
    const text = textOf(msg.content);
    if (!text) return;
    const id = typeof msg.id === 'string' ? msg.id : '';
    this.streamed.set(id, (this.streamed.get(id) ?? '') + text);
    this.channel.answerToken(text);
  }

  /** updates: an agent step's AI message (answer done, tool calls start); a tools step (tool calls end). */
  private async onUpdate(data: unknown): Promise<void> {
    if (!isObj(data)) return;
    for (const update of Object.values(data)) {
      const messages = isObj(update) && Array.isArray(update.messages) ? update.messages.filter(isObj) : [];
      for (const m of messages) {
        if (isAi(m)) {
          await this.finishAnswer(m);
          for (const call of Array.isArray(m.tool_calls) ? m.tool_calls.filter(isObj) : []) {
            this.startTool(typeof call.id === 'string' ? call.id : undefined, String(call.name ?? 'tool'), call);
          }
        } else if (isTool(m)) {
          this.endTool(typeof m.tool_call_id === 'string' ? m.tool_call_id : undefined, m.status === 'error' ? 'error' : 'ok');
        }
      }
    }
  }

  /** `tools` stream mode (LangGraph's tool progress), when the server sends it; it may carry `display_name`. */
  private onToolEvent(data: unknown): void {
    if (!isObj(data)) return;
    const id = typeof data.toolCallId === 'string' ? data.toolCallId : typeof data.tool_call_id === 'string' ? data.tool_call_id : undefined;
    const name = String(data.name ?? 'tool');
    const event = String(data.event ?? data.state ?? '');
    if (/start/.test(event)) this.startTool(id, name, data);
    else if (/end|completed/.test(event)) this.endTool(id, 'ok');
    else if (/error/.test(event)) this.endTool(id, 'error');
  }

  private startTool(id: string | undefined, name: string, payload: unknown): void {
    const key = id ?? name;
    const known = this.running.get(key);
    const displayName = displayNameOf(name, payload);
    // A later event may bring the display name an earlier one lacked: show the better one.
    if (known && (known.displayName !== known.name || displayName === known.displayName)) return;
    const tool: ToolActivity = { ...(id ? { id } : {}), name, displayName };
    this.running.set(key, tool);
    this.channel.toolStarted(tool);
  }

  private endTool(id: string | undefined, outcome: ToolOutcome): void {
    const key = id ?? [...this.running.keys()][0];
    const tool = key ? this.running.get(key) : undefined;
    if (!key || !tool) return;
    this.running.delete(key);
    this.channel.toolFinished(tool, outcome);
  }

  private stopTools(outcome: ToolOutcome): void {
    for (const key of [...this.running.keys()]) this.endTool(key, outcome);
  }

  private async finishAnswer(m: Obj): Promise<void> {
    const id = typeof m.id === 'string' ? m.id : '';
    if (id && this.finished.has(id)) return;
    const text = textOf(m.content) || this.streamed.get(id) || '';
    if (id) this.finished.add(id);
    this.streamed.delete(id);
    if (text.trim()) await this.channel.answerDone(text);
  }

  /** Answers streamed but never closed by an update (a server without `updates`): closed from the final values. */
  private async flushAnswers(values: Obj | undefined): Promise<void> {
    if (this.streamed.size === 0) return;
    const messages = values && Array.isArray(values.messages) ? values.messages.filter(isObj) : [];
    for (const [id, text] of [...this.streamed]) {
      const m = messages.find((x) => x.id === id);
      await this.finishAnswer(m ?? { id, content: text });
    }
  }
}

function describeError(data: unknown): string {
  if (isObj(data)) return String(data.message ?? data.error ?? JSON.stringify(data));
  return String(data);
}
