import type { Client } from '@langchain/langgraph-sdk';
import type { ChatState, SessionStateStore } from '../session-state.js';

const PAGE = 100;

/**
 * A chat's current session kept on the server, in thread metadata: every session of a chat carries
 * `{client, chat_id}` (sessions.ts) and the one chosen last a later `selected_at`. A bot keeps no
 * file, survives restarts and can run on several gateway replicas.
 */
export class ThreadMetadataSessionState implements SessionStateStore {
  constructor(
    private readonly client: Client,
    /** The `client` metadata of this channel's sessions, e.g. `agentloop-telegram`. */
    private readonly clientName: string,
  ) {}

  async get(chatId: string): Promise<ChatState> {
    let best: { id: string; at: string } | undefined;
    for (let offset = 0; ; offset += PAGE) {
      const page = await this.client.threads.search({ metadata: { client: this.clientName, chat_id: chatId }, limit: PAGE, offset });
      for (const t of page) {
        const at = t.metadata?.selected_at;
        if (typeof at === 'string' && (!best || at > best.at)) best = { id: t.thread_id, at };
      }
      if (page.length < PAGE) break;
    }
    return best ? { current: best.id } : {};
  }

  async set(_chatId: string, state: ChatState): Promise<void> {
    // No current session (its thread was deleted): the most recently chosen remaining one becomes current.
    if (!state.current) return;
    await this.client.threads.update(state.current, { metadata: { selected_at: new Date().toISOString() } });
  }
}
