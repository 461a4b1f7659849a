import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** What a channel remembers per chat between restarts: the current session (thread id). */
export interface ChatState {
  current?: string;
}

/** Where the chat → thread mapping lives (a JSON file for the CLI; a bot may keep it elsewhere). */
export interface SessionStateStore {
  get(chatId: string): Promise<ChatState>;
  set(chatId: string, state: ChatState): Promise<void>;
}

interface StateFile {
  chats: Record<string, ChatState>;
}

/**
 * A SessionStateStore in one small JSON file (the CLI's `~/.agentloop/cli.json`). Writes go to a
 * temporary file renamed over the old one, so a crash never leaves half a file.
 */
export class JsonFileSessionState implements SessionStateStore {
  constructor(readonly file: string) {}

  async get(chatId: string): Promise<ChatState> {
    return (await this.read()).chats[chatId] ?? {};
  }

  async set(chatId: string, state: ChatState): Promise<void> {
    const all = await this.read();
    all.chats[chatId] = state;
    await mkdir(path.dirname(this.file), { recursive: true });
    const temp = `${this.file}.${process.pid}.tmp`;
    await writeFile(temp, JSON.stringify(all, null, 2) + '\n', { mode: 0o600 });
    await rename(temp, this.file);
  }

  private async read(): Promise<StateFile> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { chats: {} };
      throw err;
    }
    try {
      const parsed = JSON.parse(text) as Partial<StateFile>;
      return { chats: parsed.chats && typeof parsed.chats === 'object' ? parsed.chats : {} };
    } catch {
      // A damaged state file only loses the "current session" pointer: sessions live on the server.
      return { chats: {} };
    }
  }
}

/** A SessionStateStore in memory (tests, or a bot that starts every chat fresh). */
export class MemorySessionState implements SessionStateStore {
  private readonly chats = new Map<string, ChatState>();
  async get(chatId: string): Promise<ChatState> {
    return { ...(this.chats.get(chatId) ?? {}) };
  }
  async set(chatId: string, state: ChatState): Promise<void> {
    this.chats.set(chatId, { ...state });
  }
}
