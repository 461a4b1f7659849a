import { Client, type Config } from '@langchain/langgraph-sdk';
import { Bot, type Context } from 'grammy';
import type { Update } from 'grammy/types';
import type { IncomingFile } from '../channel.js';
import { ChatEngine } from '../chat-engine.js';
import { COMMANDS } from '../commands.js';
import type { ServerAccess } from '../workspace-files.js';
import { parseApprovalPress } from './callbacks.js';
import { TelegramChannel, type ChannelLogger } from './telegram-channel.js';
import { ThreadMetadataSessionState } from './thread-session-state.js';

/** The `client` metadata of Telegram sessions (threads). */
export const TELEGRAM_CLIENT_NAME = 'agentloop-telegram';

/** Largest file a bot may download (Bot API getFile). */
const TELEGRAM_MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024;

export interface TelegramBotOptions {
  token: string;
  /** Bot API root (default https://api.telegram.org): tests point it at a fake. */
  apiRoot?: string;
  /** The AgentLoop API the chats use, with the API key of the tenant they belong to. */
  server: ServerAccess;
  assistantId: string;
  /** Run config of every run; an array gives one per run, the last repeating (tests: scripted models). */
  runConfig?: Config | Config[];
  /** Chat ids served; empty or absent: every chat (anyone who finds the bot uses the tenant's agent). */
  allowedChats?: readonly string[];
  logger: ChannelLogger;
}

interface ChatSlot {
  engine: ChatEngine;
  channel: TelegramChannel;
  /** This chat's work, one update after another (a run, then the next message). */
  queue: Promise<void>;
}

function configPerRun(config: Config | Config[] | undefined): (() => Config | undefined) | undefined {
  if (config === undefined) return undefined;
  if (!Array.isArray(config)) return () => config;
  let run = 0;
  return () => config[Math.min(run++, config.length - 1)];
}

/**
 * The Telegram channel (seed 003) on grammY: each chat is a conversation of the shared ChatEngine,
 * its sessions threads of the tenant (metadata `{client: agentloop-telegram, chat_id}`), slash
 * commands as in the terminal. Updates arrive by long polling (`startPolling`) or through the
 * gateway's webhook route (`handleUpdate`); handlers only queue work per chat and return, so a long
 * run never holds up other chats, the poller, or Telegram's webhook request.
 */
export class TelegramBot {
  readonly bot: Bot;
  private readonly chats = new Map<string, ChatSlot>();
  private readonly client: Client;
  private readonly state: ThreadMetadataSessionState;
  private readonly runConfig: (() => Config | undefined) | undefined;
  private polling: Promise<void> | undefined;

  constructor(private readonly opts: TelegramBotOptions) {
    this.bot = new Bot(opts.token, opts.apiRoot ? { client: { apiRoot: opts.apiRoot } } : {});
    this.client = new Client({ apiUrl: opts.server.apiUrl, ...(opts.server.apiKey ? { apiKey: opts.server.apiKey } : {}) });
    this.state = new ThreadMetadataSessionState(this.client, TELEGRAM_CLIENT_NAME);
    this.runConfig = configPerRun(opts.runConfig);
    this.bot.on('message', (ctx) => this.onMessage(ctx));
    this.bot.on('callback_query:data', (ctx) => this.onButton(ctx));
    this.bot.catch((err) => opts.logger.error({ err: String(err.error), update_id: err.ctx.update.update_id }, 'telegram: update failed'));
  }

  /** Checks the token (getMe) and publishes the slash commands as the bot's menu. */
  async init(): Promise<void> {
    await this.bot.init();
    // Telegram's menu allows lowercase names only; every command of the engine qualifies.
    await this.bot.api.setMyCommands(COMMANDS.map((c) => ({ command: c.name, description: c.summary.slice(0, 256) })));
    this.opts.logger.info({ bot: this.bot.botInfo.username, chats: this.opts.allowedChats?.length ? this.opts.allowedChats : 'any' }, 'telegram bot ready');
  }

  /** Long polling (getUpdates) until `stop()`; drops a webhook set earlier, as Telegram requires. */
  startPolling(): void {
    this.polling = this.bot.start({ drop_pending_updates: false, allowed_updates: ['message', 'callback_query'] }).catch((err: unknown) => {
      this.opts.logger.error({ err: String(err) }, 'telegram: polling stopped');
    });
  }

  /** Webhook mode: asks Telegram to push updates to `url` with the secret token. */
  async setWebhook(url: string, secretToken: string): Promise<void> {
    await this.bot.api.setWebhook(url, { secret_token: secretToken, allowed_updates: ['message', 'callback_query'] });
  }

  /** One update pushed to the webhook. Resolves once it is queued (its run goes on in the background). */
  handleUpdate(update: Update): Promise<void> {
    return this.bot.handleUpdate(update);
  }

  /** Resolves when the work queued for every chat so far is done. */
  async idle(): Promise<void> {
    await Promise.all([...this.chats.values()].map(async (s) => (await s.queue, await s.channel.flush())));
  }

  async stop(): Promise<void> {
    // Stopping the poller confirms the last offset with Telegram: unreachable, that is only logged.
    if (this.bot.isRunning()) await this.bot.stop().catch((err: unknown) => this.opts.logger.warn({ err: String(err) }, 'telegram: polling stop failed'));
    await this.polling;
    await Promise.all([...this.chats.values()].map((s) => s.engine.cancelRun().catch(() => false)));
  }

  private allowed(chatId: string): boolean {
    return !this.opts.allowedChats?.length || this.opts.allowedChats.includes(chatId);
  }

  private slot(chat: number): ChatSlot {
    const key = String(chat);
    let slot = this.chats.get(key);
    if (!slot) {
      const channel = new TelegramChannel(this.bot.api, chat, this.opts.logger);
      const engine = new ChatEngine({
        client: this.client,
        access: this.opts.server,
        channel,
        state: this.state,
        clientName: TELEGRAM_CLIENT_NAME,
        run: { assistantId: this.opts.assistantId, ...(this.runConfig ? { config: this.runConfig } : {}) },
      });
      slot = { engine, channel, queue: Promise.resolve() };
      this.chats.set(key, slot);
    }
    return slot;
  }

  /** Queues work for a chat; a failure is told to the chat (and logged), never lost. */
  private enqueue(chat: number, user: number | undefined, work: (slot: ChatSlot) => Promise<void>): void {
    const slot = this.slot(chat);
    slot.queue = slot.queue.then(async () => {
      slot.channel.user = user;
      try {
        await work(slot);
      } catch (err) {
        this.opts.logger.warn({ chat, err: String(err) }, 'telegram: chat update failed');
        await slot.channel.notice(`✗ ${(err as Error).message ?? String(err)}`, 'error').catch(() => undefined);
      }
    });
  }

  private async onMessage(ctx: Context): Promise<void> {
    const msg = ctx.message;
    if (!msg) return;
    const chatId = String(msg.chat.id);
    if (!this.allowed(chatId)) {
      this.opts.logger.warn({ chat: chatId }, 'telegram: message from a chat not in TELEGRAM_ALLOWED_CHATS');
      await ctx.reply('This bot does not serve this chat.');
      return;
    }
    // `/new@MyBot title` in a group: the engine's commands carry no bot name.
    const text = (msg.text ?? msg.caption ?? '').replace(/^(\/\w+)@\w+/, '$1');
    const fileRef = msg.document
      ? { id: msg.document.file_id, name: msg.document.file_name ?? `document-${msg.document.file_unique_id}`, mime: msg.document.mime_type }
      : msg.photo?.length
        ? { id: msg.photo[msg.photo.length - 1]!.file_id, name: `photo-${msg.photo[msg.photo.length - 1]!.file_unique_id}.jpg`, mime: 'image/jpeg' }
        : undefined;
    const busy = this.chats.get(chatId)?.engine.busy;
    // As in the terminal: a message during a run waits for it, and the person is told so.
    if (busy) await this.slot(msg.chat.id).channel.notice('⏳ Queued: sent when the current run ends.');
    this.enqueue(msg.chat.id, msg.from?.id, async ({ engine, channel }) => {
      if (/^\/start\b/.test(text)) {
        await channel.notice('Hello! Send a message to talk to the agent, or a file to add it to the session. /help lists the commands.');
        return;
      }
      const files: IncomingFile[] = fileRef ? [await this.download(fileRef)] : [];
      const result = await engine.handle({ text, files });
      if (result.exit) await channel.notice('Bye! Send a message any time to continue this session.');
    });
  }

  private async onButton(ctx: Context): Promise<void> {
    const query = ctx.callbackQuery;
    const chat = query?.message?.chat.id;
    const press = query?.data ? parseApprovalPress(query.data) : undefined;
    if (!query || chat === undefined || !press || !this.allowed(String(chat))) {
      await ctx.answerCallbackQuery({ text: 'This button is no longer valid.' });
      return;
    }
    if (query.from.id !== press.userId) {
      await ctx.answerCallbackQuery({ text: 'Only the person who asked the agent can answer this approval.', show_alert: true });
      return;
    }
    const approved = press.answer.type === 'approve';
    await ctx.answerCallbackQuery({ text: approved ? 'Approved' : 'Rejected' });
    // The buttons go away with the decision written under the prompt, so it cannot be pressed twice.
    const prompt = query.message && 'text' in query.message ? (query.message.text ?? '') : '';
    await ctx.editMessageText(`${prompt}\n\n${approved ? '✅ Approved' : '❌ Rejected'} by ${query.from.first_name}`).catch(() => undefined);
    this.enqueue(chat, query.from.id, async ({ engine }) => {
      await engine.answerApproval(press.threadId, press.answer);
    });
  }

  /** A file the person sent: getFile, then the download from the Bot API's file endpoint. */
  private async download(ref: { id: string; name: string; mime: string | undefined }): Promise<IncomingFile> {
    const file = await this.bot.api.getFile(ref.id);
    if (!file.file_path) throw new Error(`Telegram gave no download path for ${ref.name}`);
    if ((file.file_size ?? 0) > TELEGRAM_MAX_DOWNLOAD_BYTES) throw new Error(`${ref.name} is larger than the 20 MB a bot may download`);
    const root = (this.opts.apiRoot ?? 'https://api.telegram.org').replace(/\/+$/, '');
    const res = await fetch(`${root}/file/bot${this.opts.token}/${file.file_path}`);
    if (!res.ok) throw new Error(`Downloading ${ref.name} from Telegram failed: HTTP ${res.status}`);
    return { name: ref.name, data: new Uint8Array(await res.arrayBuffer()), ...(ref.mime ? { mime: ref.mime } : {}) };
  }
}
