import { randomUUID } from 'node:crypto';
import type { Client, Thread } from '@langchain/langgraph-sdk';
import { threadInterrupts, type PendingInterrupt } from './interrupts.js';
import type { SessionStateStore } from './session-state.js';

/** A session as channels list it: one thread of the server. */
export interface SessionInfo {
  threadId: string;
  title?: string;
  createdAt: string;
  updatedAt: string;
  status: string;
  /** What the thread waits on when it is `interrupted` (an approval, an `ask_human` question). */
  pending: PendingInterrupt[];
}

/** Days after which `/clean` deletes a session (seed 001 §1.4). */
export const CLEAN_AFTER_DAYS = 7;

const DAY_MS = 24 * 60 * 60 * 1000;
const PAGE = 100;

export const isNotFound = (err: unknown): boolean => (err as { status?: unknown } | null)?.status === 404;

function toSession(t: Thread): SessionInfo {
  const title = t.metadata?.title;
  return {
    threadId: t.thread_id,
    ...(typeof title === 'string' && title ? { title } : {}),
    createdAt: t.created_at,
    updatedAt: t.updated_at,
    status: t.status,
    pending: threadInterrupts(t),
  };
}

/**
 * Sessions are threads (seed 001 §1.5 over the LangGraph API): each carries metadata naming the
 * channel client and chat that made it, and its title, so they show in any LangGraph client; the
 * current one is remembered per chat in a {@link SessionStateStore} so it survives restarts.
 */
export class Sessions {
  constructor(
    private readonly client: Client,
    private readonly state: SessionStateStore,
    /** The conversation on the transport (terminal, Telegram chat id). */
    readonly chatId: string,
    /** Stamped into every thread's metadata as `client`, e.g. `agentloop-cli`. */
    readonly clientName: string,
  ) {}

  /** The metadata every session of this chat carries (and is searched by). */
  get ownership(): Record<string, string> {
    return { client: this.clientName, chat_id: this.chatId };
  }

  /** The current session, or undefined when there is none (or its thread is gone). */
  async current(): Promise<SessionInfo | undefined> {
    const { current } = await this.state.get(this.chatId);
    if (!current) return undefined;
    try {
      return toSession(await this.client.threads.get(current));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** The current session, made when there is none. */
  async ensureCurrent(): Promise<SessionInfo> {
    return (await this.current()) ?? this.create();
  }

  /**
   * A new session, made current. The session names its thread with a random UUID: people tell
   * sessions apart by the first characters of the id (`/sessions` shows 8, `/load <id-prefix>`
   * matches a prefix: README "The `agentloop` CLI"), and the ids a server makes may begin with
   * their creation time (LangGraph's and AgentLoop's are UUIDv7), the same for every session of
   * the same minute.
   */
  async create(title?: string): Promise<SessionInfo> {
    const thread = await this.client.threads.create({ threadId: randomUUID(), metadata: { ...this.ownership, ...(title ? { title } : {}) } });
    await this.makeCurrent(thread.thread_id);
    return toSession(thread);
  }

  async makeCurrent(threadId: string): Promise<void> {
    await this.state.set(this.chatId, { current: threadId });
  }

  /** Every session of this chat, oldest first, so `/switch <index>` numbers stay put as sessions are added. */
  async list(): Promise<SessionInfo[]> {
    const out: SessionInfo[] = [];
    for (let offset = 0; ; offset += PAGE) {
      const page = await this.client.threads.search({ metadata: this.ownership, limit: PAGE, offset, sortBy: 'created_at', sortOrder: 'asc' });
      out.push(...page.map(toSession));
      if (page.length < PAGE) return out;
    }
  }

  /** Makes the session at a 1-based index of {@link list} current. */
  async switchTo(index: number): Promise<SessionInfo | undefined> {
    const target = (await this.list())[index - 1];
    if (target) await this.makeCurrent(target.threadId);
    return target;
  }

  /** Makes the session whose thread id starts with `prefix` current; ambiguous prefixes load nothing. */
  async load(prefix: string): Promise<{ session?: SessionInfo; matches: SessionInfo[] }> {
    const matches = (await this.list()).filter((s) => s.threadId.startsWith(prefix));
    const session = matches.length === 1 ? matches[0] : undefined;
    if (session) await this.makeCurrent(session.threadId);
    return { ...(session ? { session } : {}), matches };
  }

  /** Sets the title of the current session (thread metadata `title`). */
  async rename(title: string): Promise<SessionInfo> {
    const current = await this.ensureCurrent();
    return toSession(await this.client.threads.update(current.threadId, { metadata: { title } }));
  }

  /** Deletes a session's thread: its conversation, checkpoints and workspace. */
  async remove(threadId: string): Promise<void> {
    try {
      await this.client.threads.delete(threadId);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const { current } = await this.state.get(this.chatId);
    if (current === threadId) await this.state.set(this.chatId, {});
  }

  /** Deletes the sessions (with their workspaces) created more than `days` days before `now`, except the current one. */
  async clean(days = CLEAN_AFTER_DAYS, now = new Date()): Promise<SessionInfo[]> {
    const cutoff = now.getTime() - days * DAY_MS;
    const { current } = await this.state.get(this.chatId);
    const old = (await this.list()).filter((s) => s.threadId !== current && Date.parse(s.createdAt) < cutoff);
    for (const s of old) await this.remove(s.threadId);
    return old;
  }
}
