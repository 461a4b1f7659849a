/**
 * A local fake OpenAI-compatible chat model server for the tests: `POST /v1/chat/completions`,
 * answered as OpenAI does — with `stream: true`, SSE `chat.completion.chunk`s (a tool call's
 * arguments in pieces, the text in pieces, then a usage chunk when `stream_options.include_usage`,
 * then `[DONE]`); without, one `chat.completion`. What it answers: a call of `tool` when the
 * conversation's last message is the user's, else the `answer` — or, when `respond` is given,
 * whatever it picks for the conversation.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One model turn: a tool call, or a text answer. */
export type FakeTurn = { tool: { name: string; args: Record<string, unknown> } } | { answer: string };

export interface FakeOpenAiOptions {
  /** The tool called first (its arguments are streamed in pieces). */
  tool?: { name: string; args: Record<string, unknown> };
  /** The final answer, streamed in pieces of `pieceSize` characters. */
  answer?: string;
  pieceSize?: number;
  /** Picks the turn from the conversation (instead of `tool` then `answer`). */
  respond?: (messages: ReadonlyArray<{ role: string; content?: unknown }>) => FakeTurn;
}

function defaultTurn(opts: FakeOpenAiOptions, messages: ReadonlyArray<{ role: string }>): FakeTurn {
  if (!opts.tool || opts.answer === undefined) throw new Error('startFakeOpenAi: give `tool` and `answer`, or `respond`');
  return messages.at(-1)?.role === 'user' ? { tool: opts.tool } : { answer: opts.answer };
}

export interface FakeOpenAi {
  /** The base URL to configure (`…/v1`). */
  baseUrl: string;
  /** The request bodies received. */
  requests: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

interface ChatMessage {
  role: string;
  content?: unknown;
}

async function body(req: IncomingMessage): Promise<Record<string, unknown>> {
  const parts: Buffer[] = [];
  for await (const p of req) parts.push(p as Buffer);
  return JSON.parse(Buffer.concat(parts).toString('utf8')) as Record<string, unknown>;
}

function pieces(s: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

export async function startFakeOpenAi(opts: FakeOpenAiOptions): Promise<FakeOpenAi> {
  const requests: Array<Record<string, unknown>> = [];
  let n = 0;
  const server: Server = createServer((req, res) => {
    void (async () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
        return;
      }
      const b = await body(req);
      requests.push(b);
      const messages = (b.messages ?? []) as ChatMessage[];
      const turn = opts.respond ? opts.respond(messages) : defaultTurn(opts, messages);
      const callTool = 'tool' in turn;
      const tool = 'tool' in turn ? turn.tool : { name: '', args: {} };
      const answer = 'answer' in turn ? turn.answer : '';
      const id = `chatcmpl-fake${++n}`;
      const model = typeof b.model === 'string' ? b.model : 'fake';
      const created = Math.floor(Date.now() / 1000);
      const args = JSON.stringify(tool.args);
      const usage = { prompt_tokens: 20 + messages.length, completion_tokens: callTool ? 12 : 9, total_tokens: 32 + messages.length + (callTool ? 0 : -3) };
      const callId = `call_fake${n}`;

      if (b.stream !== true) {
        const message = callTool
          ? { role: 'assistant', content: null, tool_calls: [{ id: callId, type: 'function', function: { name: tool.name, arguments: args } }] }
          : { role: 'assistant', content: answer };
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id,
            object: 'chat.completion',
            created,
            model,
            choices: [{ index: 0, message, finish_reason: callTool ? 'tool_calls' : 'stop' }],
            usage,
          }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      const send = (choices: unknown[], extra: Record<string, unknown> = {}) =>
        res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices, ...extra })}\n\n`);
      const delta = (d: Record<string, unknown>, finish: string | null = null) => send([{ index: 0, delta: d, logprobs: null, finish_reason: finish }]);
      delta({ role: 'assistant', content: callTool ? null : '' });
      if (callTool) {
        delta({ tool_calls: [{ index: 0, id: callId, type: 'function', function: { name: tool.name, arguments: '' } }] });
        for (const p of pieces(args, Math.max(1, Math.ceil(args.length / 3)))) delta({ tool_calls: [{ index: 0, function: { arguments: p } }] });
        delta({}, 'tool_calls');
      } else {
        for (const p of pieces(answer, opts.pieceSize ?? 6)) {
          delta({ content: p });
          // A provider's tokens arrive over time.
          await new Promise((r) => setTimeout(r, 2));
        }
        delta({}, 'stop');
      }
      if ((b.stream_options as { include_usage?: boolean } | undefined)?.include_usage) send([], { usage });
      res.end('data: [DONE]\n\n');
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: String(err) } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
