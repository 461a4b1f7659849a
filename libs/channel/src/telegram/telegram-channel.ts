import { GrammyError, InputFile, type Api } from 'grammy';
import type { ApprovalAnswer, ApprovalPrompt, Channel, NoticeKind, OutgoingFile, ToolActivity, ToolOutcome } from '../channel.js';
import { approvalButtons } from './callbacks.js';
import { escapeHtml, markdownToTelegram, splitText } from './format.js';

/** What the Telegram channel logs (pino's signature, so the gateway's logger fits). */
export interface ChannelLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Largest file a bot may send (Bot API sendDocument); bigger outputs are named, not sent. */
export const TELEGRAM_MAX_UPLOAD_BYTES = 50 * 1024 * 1024;

/** Telegram shows "typing…" for 5 s after sendChatAction: renewed at most this often while the agent works. */
const TYPING_EVERY_MS = 4_000;

const MARK: Record<ToolOutcome, string> = { ok: '✅', error: '❌', stopped: '⏸' };

/**
 * One Telegram chat as a Channel. Answers are sent whole once each step ends (no message edited per
 * token: Telegram limits edits to about one a second per chat), as Telegram HTML split at 4096
 * characters; "typing…" shows while the agent works. A tool call is one message, edited when the
 * tool ends. Approvals are inline buttons and `ask_human` a question: both resolve undefined at once,
 * and the button press or the next message resumes the run (chat-engine.ts), so nothing waits in
 * memory. Every message goes out in order through one queue.
 */
export class TelegramChannel implements Channel {
  readonly chatId: string;
  /** The Telegram user whose message this chat is handling: only they may answer its approvals. */
  user: number | undefined;
  private outbox: Promise<unknown> = Promise.resolve();
  private lastTyping = 0;
  private readonly toolMessages = new Map<string, Promise<number | undefined>>();

  constructor(
    private readonly api: Api,
    private readonly chat: number,
    private readonly logger: ChannelLogger,
  ) {
    this.chatId = String(chat);
  }

  answerToken(): void {
    this.typing();
  }

  async answerDone(text: string): Promise<void> {
    for (const part of markdownToTelegram(text)) await this.enqueue(() => this.sendHtml(part));
  }

  toolStarted(tool: ToolActivity): void {
    this.typing();
    const sent = this.enqueue(() => this.api.sendMessage(this.chat, `⚙️ ${escapeHtml(tool.displayName)}…`, { parse_mode: 'HTML' })).then(
      (m) => m.message_id,
      (err: unknown) => void this.logger.warn({ chat: this.chatId, err: String(err) }, 'telegram: tool message not sent'),
    );
    this.toolMessages.set(tool.id ?? tool.name, sent);
  }

  toolFinished(tool: ToolActivity, outcome: ToolOutcome): void {
    const key = tool.id ?? tool.name;
    const sent = this.toolMessages.get(key);
    this.toolMessages.delete(key);
    const note = outcome === 'error' ? ' (failed)' : outcome === 'stopped' ? ' (waiting)' : '';
    const text = `${MARK[outcome]} ${escapeHtml(tool.displayName)}${note}`;
    void this.enqueue(async () => {
      const id = await sent;
      if (id === undefined) return this.api.sendMessage(this.chat, text, { parse_mode: 'HTML' });
      return this.api.editMessageText(this.chat, id, text, { parse_mode: 'HTML' });
    }).catch((err: unknown) => this.logger.warn({ chat: this.chatId, err: String(err) }, 'telegram: tool message not updated'));
  }

  async askApproval(prompt: ApprovalPrompt): Promise<ApprovalAnswer | undefined> {
    const args = JSON.stringify(prompt.args ?? {}, null, 2);
    const lines = [
      `⚠️ <b>Approval needed:</b> ${escapeHtml(prompt.displayName)} (<code>${escapeHtml(prompt.tool)}</code>)`,
      ...(prompt.reason ? [`Reason: ${escapeHtml(prompt.reason)}${prompt.riskLevel ? ` [${escapeHtml(prompt.riskLevel)}]` : ''}`] : []),
      `<pre>${escapeHtml(args.length > 3000 ? `${args.slice(0, 3000)}…` : args)}</pre>`,
    ];
    if (!prompt.threadId) {
      await this.notice('An approval is needed but its session is unknown: use another client to answer it.', 'error');
      return undefined;
    }
    const keyboard = approvalButtons(prompt.threadId, this.user ?? this.chat);
    await this.enqueue(() => this.api.sendMessage(this.chat, lines.join('\n'), { parse_mode: 'HTML', reply_markup: keyboard }));
    return undefined;
  }

  async askQuestion(question: string): Promise<string | undefined> {
    await this.enqueue(() => this.api.sendMessage(this.chat, `❓ ${escapeHtml(question)}\n<i>Your next message answers it.</i>`, { parse_mode: 'HTML' }));
    return undefined;
  }

  async notice(text: string, kind: NoticeKind = 'info'): Promise<void> {
    // Command output is aligned plain text (/list, /help): sent as is, no parse mode to trip on.
    void kind;
    for (const part of splitText(text)) await this.enqueue(() => this.api.sendMessage(this.chat, part));
  }

  async sendFile(file: OutgoingFile): Promise<void> {
    if (file.size !== undefined && file.size > TELEGRAM_MAX_UPLOAD_BYTES) {
      return this.notice(`📎 ${file.path} (${file.size} bytes) is larger than Telegram lets a bot send (50 MB): download it from ${file.url}`);
    }
    const data = await file.download();
    await this.enqueue(() => this.api.sendDocument(this.chat, new InputFile(data, file.name), { caption: file.path }));
  }

  /** Resolves once everything queued so far is sent. */
  async flush(): Promise<void> {
    await this.outbox.catch(() => undefined);
  }

  private enqueue<T>(send: () => Promise<T>): Promise<T> {
    const next = this.outbox.catch(() => undefined).then(send);
    this.outbox = next;
    return next;
  }

  /** HTML the formatter made; should Telegram still refuse it, the same text goes out without markup. */
  private async sendHtml(html: string): Promise<unknown> {
    try {
      return await this.api.sendMessage(this.chat, html, { parse_mode: 'HTML' });
    } catch (err) {
      if (!(err instanceof GrammyError) || !/parse entities/i.test(err.description)) throw err;
      const plain = html
        .replace(/<[^>]+>/g, '')
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&quot;/g, '"')
        .replace(/&amp;/g, '&');
      return this.api.sendMessage(this.chat, plain);
    }
  }

  private typing(): void {
    const now = Date.now();
    if (now - this.lastTyping < TYPING_EVERY_MS) return;
    this.lastTyping = now;
    this.api.sendChatAction(this.chat, 'typing').catch(() => undefined);
  }
}
