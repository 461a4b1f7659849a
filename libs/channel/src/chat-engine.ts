import type { Client } from '@langchain/langgraph-sdk';
import type { ApprovalAnswer, Channel, IncomingFile, IncomingMessage } from './channel.js';
import { elicitationPromptOf, elicitationResume } from './elicitation.js';
import { approvalPromptOf, approvalResume, questionOf, type PendingInterrupt } from './interrupts.js';
import { COMMANDS, parseCommand, runCommand, type CommandResult } from './commands.js';
import { RunDriver, type RunSettings, type TurnOutcome } from './run-driver.js';
import { Sessions } from './sessions.js';
import type { SessionStateStore } from './session-state.js';
import { WorkspaceFiles, type ServerAccess, type WorkspaceFile } from './workspace-files.js';

export interface ChatEngineOptions {
  client: Client;
  access: ServerAccess;
  channel: Channel;
  state: SessionStateStore;
  /** Stamped into thread metadata as `client` (e.g. `agentloop-cli`, `agentloop-telegram`). */
  clientName: string;
  run: RunSettings;
  /** Reads a local file for `/upload <path>` (the terminal); channels without local files leave it out. */
  readLocalFile?: (path: string) => Promise<IncomingFile>;
}

/**
 * The transport-neutral chat: a person's message is a slash command or a turn of the current
 * session; files sent along are uploaded to the session's workspace first (the server announces
 * them in the next run). After a turn, new `outputs/` files are sent back (seed 003's output pipeline).
 */
export class ChatEngine {
  readonly sessions: Sessions;
  readonly files: WorkspaceFiles;
  private driver: RunDriver | undefined;

  constructor(readonly options: ChatEngineOptions) {
    this.sessions = new Sessions(options.client, options.state, options.channel.chatId, options.clientName);
    this.files = new WorkspaceFiles(options.access);
  }

  get channel(): Channel {
    return this.options.channel;
  }

  get client(): Client {
    return this.options.client;
  }

  /** True while a run is streaming or waiting for the person. */
  get busy(): boolean {
    return this.driver !== undefined;
  }

  async handle(message: IncomingMessage): Promise<CommandResult> {
    if (message.files?.length) await this.upload(message.files);
    const text = message.text?.trim() ?? '';
    if (!text) return {};
    const command = parseCommand(text);
    if (command) return runCommand(this, command);
    const session = await this.sessions.current();
    const pending = session?.pending[0];
    if (session && pending) {
      await this.answerPending(session.threadId, pending, text);
      return {};
    }
    await this.send(text);
    return {};
  }

  /** Uploads files to the current session's workspace and says so. */
  async upload(files: IncomingFile[]): Promise<void> {
    const session = await this.sessions.ensureCurrent();
    const uploaded = await this.files.upload(session.threadId, files);
    for (const f of uploaded) {
      await this.channel.notice(`✓ Uploaded: ${f.name} → ${f.path}${f.warning ? ` (${f.warning})` : ''}`, 'success');
    }
    if (uploaded.length) await this.channel.notice('Your next message will mention them to the agent.');
  }

  /** A turn: the text as a user message of the current session, streamed to the channel. */
  async send(text: string): Promise<TurnOutcome> {
    const session = await this.sessions.ensureCurrent();
    return this.drive(session.threadId, (driver) => driver.run(session.threadId, { input: { messages: [{ role: 'user', content: text }] } }));
  }

  /**
   * A person's decision on an approval the chat showed earlier (a chat app's button): resumes the
   * thread when it is one of this chat's sessions and still waits on an approval.
   */
  async answerApproval(threadId: string, answer: ApprovalAnswer): Promise<TurnOutcome | undefined> {
    const session = (await this.sessions.list()).find((s) => s.threadId === threadId);
    if (!session?.pending.some((p) => approvalPromptOf(p.value))) {
      await this.channel.notice('This approval was already answered (or its session is gone).');
      return undefined;
    }
    return this.drive(threadId, (driver) => driver.run(threadId, { command: { resume: approvalResume(answer) } }));
  }

  /**
   * A message while the session waits on a person: it answers an `ask_human` question or an MCP
   * server's request for input (libs/channel elicitation.ts); for an
   * approval, the prompt is shown again (a terminal asks inline; a chat app shows its buttons).
   */
  private async answerPending(threadId: string, pending: PendingInterrupt, text: string): Promise<TurnOutcome> {
    if (questionOf(pending.value) !== undefined) {
      return this.drive(threadId, (driver) => driver.run(threadId, { command: { resume: text } }));
    }
    const elicitation = elicitationPromptOf(pending.value);
    if (elicitation) {
      return this.drive(threadId, (driver) => driver.run(threadId, { command: { resume: elicitationResume(elicitation, text) } }));
    }
    await this.channel.notice('The agent is waiting for your decision on a tool call; your message was not sent. Decide first:');
    return this.drive(threadId, (driver) => driver.answer(threadId, pending));
  }

  /** Follows one turn on a thread, then reports how it ended and sends the new `outputs/` files. */
  private async drive(threadId: string, turn: (driver: RunDriver) => Promise<TurnOutcome>): Promise<TurnOutcome> {
    const before = await this.outputs(threadId);
    const driver = new RunDriver(this.client, this.channel, this.options.run);
    this.driver = driver;
    let outcome: TurnOutcome;
    try {
      outcome = await turn(driver);
    } finally {
      this.driver = undefined;
    }
    if (outcome.status === 'error') await this.channel.notice(`The run failed: ${outcome.error ?? 'unknown error'}`, 'error');
    if (outcome.status === 'cancelled') await this.channel.notice('Run cancelled.');
    await this.sendNewOutputs(threadId, before);
    return outcome;
  }

  /** Cancels the turn in progress; false when there is none. */
  async cancelRun(): Promise<boolean> {
    const driver = this.driver;
    if (!driver) return false;
    await driver.cancel();
    return true;
  }

  /** Names of every slash command, for channels that offer completion or a menu. */
  static commandNames(): string[] {
    return COMMANDS.flatMap((c) => [c.name, ...(c.aliases ?? [])]).map((n) => `/${n}`);
  }

  private async outputs(threadId: string): Promise<Map<string, string>> {
    const files = await this.files.list(threadId).catch(() => [] as WorkspaceFile[]);
    return new Map(files.filter((f) => f.path.startsWith('outputs/')).map((f) => [f.path, `${f.size}:${f.modified_at}`]));
  }

  private async sendNewOutputs(threadId: string, before: Map<string, string>): Promise<void> {
    const files = await this.files.list(threadId).catch(() => [] as WorkspaceFile[]);
    for (const f of files) {
      if (!f.path.startsWith('outputs/') || before.get(f.path) === `${f.size}:${f.modified_at}`) continue;
      await this.channel.sendFile({
        path: f.path,
        name: f.name,
        size: f.size,
        url: this.files.absoluteUrl(f.url),
        download: () => this.files.download(f),
      });
    }
  }
}
