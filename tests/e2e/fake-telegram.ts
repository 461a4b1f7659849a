/**
 * A local fake of the Telegram Bot API for the channel tests (no network here): the methods the
 * Telegram channel calls — getMe, setMyCommands, setWebhook, getUpdates (long polling), sendMessage,
 * editMessageText, sendChatAction, sendDocument (multipart), getFile, answerCallbackQuery — under
 * `/bot<token>/<method>`, and file downloads under `/file/bot<token>/<path>`. Every call is recorded
 * with its parameters (a sent document with its bytes) for the test to assert on.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Busboy } from '@fastify/busboy';

/** A made-up token: the fake accepts only it (a real one never appears in the repo). */
export const FAKE_BOT_TOKEN = '123456789:TEST-not-a-real-token_fake';

export interface BotCall {
  method: string;
  params: Record<string, unknown>;
  /** sendDocument: the file sent. */
  document?: { name: string; data: Buffer };
}

export interface FakeTelegram {
  /** The API root to configure (TELEGRAM_API_ROOT). */
  apiRoot: string;
  calls: BotCall[];
  /** Files the "user" sent, by file_id, served by getFile and the download endpoint. */
  files: Map<string, Buffer>;
  /** Queues an update for getUpdates (polling mode). */
  push(update: Record<string, unknown>): void;
  /** The calls of one method made after call index `from`. */
  callsOf(method: string, from?: number): BotCall[];
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** JSON or multipart parameters, as grammY sends them (multipart parsed with busboy, which fastify's uploads use too). */
async function paramsOf(req: IncomingMessage, body: Buffer): Promise<{ params: Record<string, unknown>; document?: BotCall['document'] }> {
  const type = req.headers['content-type'] ?? '';
  if (body.length === 0) return { params: {} };
  if (type.startsWith('application/json')) return { params: JSON.parse(body.toString('utf8')) as Record<string, unknown> };
  const params: Record<string, unknown> = {};
  let document: BotCall['document'];
  await new Promise<void>((resolve, reject) => {
    const bb = Busboy({ headers: { ...req.headers, 'content-type': type } });
    bb.on('field', (name, value) => {
      try {
        params[name] = JSON.parse(value);
      } catch {
        params[name] = value;
      }
    });
    bb.on('file', (name, stream, filename) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        document = { name: filename, data: Buffer.concat(chunks) };
        params[name] = `<file ${filename}>`;
      });
    });
    bb.on('finish', () => resolve());
    bb.on('error', reject);
    bb.end(body);
  });
  return { params, ...(document ? { document } : {}) };
}

export async function startFakeTelegram(): Promise<FakeTelegram> {
  const calls: BotCall[] = [];
  const files = new Map<string, Buffer>();
  const updates: Array<Record<string, unknown>> = [];
  let nextMessageId = 1000;
  const message = (params: Record<string, unknown>) => ({
    message_id: typeof params.message_id === 'number' ? params.message_id : nextMessageId++,
    date: Math.floor(Date.now() / 1000),
    chat: { id: Number(params.chat_id), type: 'private' },
    text: typeof params.text === 'string' ? params.text : undefined,
  });

  const answer = async (method: string, params: Record<string, unknown>): Promise<unknown> => {
    switch (method) {
      case 'getMe':
        return {
          id: 424242,
          is_bot: true,
          first_name: 'AgentLoop',
          username: 'agentloop_fake_bot',
          can_join_groups: true,
          can_read_all_group_messages: false,
          supports_inline_queries: false,
        };
      case 'setMyCommands':
      case 'setWebhook':
      case 'deleteWebhook':
      case 'sendChatAction':
      case 'answerCallbackQuery':
        return true;
      case 'getUpdates': {
        const offset = Number(params.offset ?? 0);
        // Long polling, briefly: the updates at or after the offset, else an empty answer after a short wait.
        for (let waited = 0; waited < 500; waited += 50) {
          const ready = updates.filter((u) => Number(u.update_id) >= offset);
          if (ready.length) return ready;
          await new Promise((r) => setTimeout(r, 50));
        }
        return [];
      }
      case 'sendMessage':
      case 'editMessageText':
      case 'sendDocument':
        return message(params);
      case 'getFile': {
        const id = String(params.file_id);
        const data = files.get(id);
        if (!data) throw new Error('Bad Request: invalid file_id');
        return { file_id: id, file_unique_id: `u-${id}`, file_size: data.length, file_path: `documents/${id}` };
      }
      default:
        throw new Error(`Not Found: method ${method} is not faked`);
    }
  };

  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const download = /^\/file\/bot([^/]+)\/documents\/(.+)$/.exec(url.pathname);
      if (download) {
        const data = download[1] === FAKE_BOT_TOKEN ? files.get(decodeURIComponent(download[2]!)) : undefined;
        res.writeHead(data ? 200 : 404).end(data ?? 'not found');
        return;
      }
      const m = /^\/bot([^/]+)\/(\w+)$/.exec(url.pathname);
      if (!m || m[1] !== FAKE_BOT_TOKEN) {
        res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: false, error_code: 401, description: 'Unauthorized' }));
        return;
      }
      const method = m[2]!;
      const { params, document } = await paramsOf(req, await readBody(req));
      if (method !== 'getUpdates') calls.push({ method, params, ...(document ? { document } : {}) });
      try {
        const result = await answer(method, params);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, result }));
      } catch (err) {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: false, error_code: 400, description: (err as Error).message }));
      }
    })().catch((err: unknown) => res.writeHead(500).end(String(err)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    apiRoot: `http://127.0.0.1:${port}`,
    calls,
    files,
    push: (u) => updates.push(u),
    callsOf: (method, from = 0) => calls.slice(from).filter((c) => c.method === method),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
