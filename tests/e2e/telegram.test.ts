/**
 * The Telegram channel (issue 13, seed 003) against a local fake of the Bot API: an embedded
 * AgentLoop runs the bot (TELEGRAM_*), updates are pushed to its webhook route like Telegram does
 * (or fetched by long polling), and the test asserts on what the bot sent the fake and on the
 * threads, files and runs through the API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@langchain/langgraph-sdk';
import { FAKE_BOT_TOKEN, startFakeTelegram, type BotCall, type FakeTelegram } from './fake-telegram.js';
import { poll, scripted, useCluster, useEmbeddedServer } from './helpers.js';

const SECRET = 'webhook-secret_for-tests';
const CHAT = 5550001;
const USER = 5550001;
const STRANGER = 5550777;
const API_KEY = 'tg-key-acme';

/** Every run of the conversation below, in order (a resume is a run too). */
const RUNS = [
  scripted([{ content: '**Hello** from <AgentLoop> & co' }]),
  scripted([
    { tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/summary.txt', content: 'Summary: buy milk' } }] },
    { content: 'Wrote outputs/summary.txt' },
  ]),
  scripted([{ tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/config.env', content: 'API_KEY=abc123' } }] }]),
  scripted([{ content: 'Saved the key.' }]),
  scripted([{ tool_calls: [{ name: 'ask_human', args: { question: 'Which color?' } }] }]),
  scripted([{ content: 'Blue it is.' }]),
];

let updateId = 1;
let messageId = 1;
const from = (id: number) => ({ id, is_bot: false, first_name: id === USER ? 'Ada' : 'Mallory' });
const textMessage = (text: string, user = USER) => ({
  message: {
    message_id: messageId++,
    date: Math.floor(Date.now() / 1000),
    chat: { id: CHAT, type: 'private' },
    from: from(user),
    text,
    ...(text.startsWith('/') ? { entities: [{ type: 'bot_command', offset: 0, length: text.split(' ')[0]!.length }] } : {}),
  },
});
const sentText = (c: BotCall) => String(c.params.text ?? '');

describe('Telegram channel (webhook mode, embedded)', () => {
  const env: NodeJS.ProcessEnv = {};
  let fake: FakeTelegram;
  beforeAll(async () => {
    fake = await startFakeTelegram();
    Object.assign(env, {
      ALLOW_SCRIPTED_MODEL: 'true',
      AGENTLOOP_API_KEYS: `${API_KEY}:acme,other-key:globex`,
      TELEGRAM_BOT_TOKEN: FAKE_BOT_TOKEN,
      TELEGRAM_MODE: 'webhook',
      TELEGRAM_WEBHOOK_SECRET: SECRET,
      TELEGRAM_API_ROOT: fake.apiRoot,
      TELEGRAM_API_KEY: API_KEY,
      TELEGRAM_TENANT: 'acme',
      TELEGRAM_RUN_CONFIG: JSON.stringify(RUNS),
      TENANT_TOKEN_BUDGETS_MONTHLY: 'acme=1000000',
    });
  });
  // Registered first, so it runs last: the server (and its bot) stops before the fake goes.
  afterAll(async () => {
    await fake?.close();
  });
  const server = useEmbeddedServer('agentloop-telegram-', env);

  const client = () => new Client({ apiUrl: server.url, apiKey: API_KEY });
  const sessions = () => client().threads.search({ metadata: { client: 'agentloop-telegram', chat_id: String(CHAT) }, sortBy: 'created_at', sortOrder: 'asc' });
  const post = (update: Record<string, unknown>, secret: string | null = SECRET) =>
    fetch(`${server.url}/channels/telegram/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(secret !== null ? { 'x-telegram-bot-api-secret-token': secret } : {}) },
      body: JSON.stringify({ update_id: updateId++, ...update }),
    });
  /** Waits for a sendMessage (after call index `after`) whose text matches. */
  const waitSent = (re: RegExp, after: number, method = 'sendMessage') =>
    poll(async () => fake.callsOf(method, after).find((c) => re.test(sentText(c))), 30_000, 50).catch(() => {
      throw new Error(`no ${method} matching ${re}; sent: ${JSON.stringify(fake.calls.slice(after).map((c) => [c.method, c.params.text]))}`);
    });
  const files = async (threadId: string) =>
    (
      (await (await fetch(`${server.url}/threads/${threadId}/files`, { headers: { 'x-api-key': API_KEY } })).json()) as { files: Array<{ path: string }> }
    ).files.map((f) => f.path);

  it('starts: checks its token and publishes the slash commands as the menu', async () => {
    const commands = await poll(async () => fake.callsOf('setMyCommands')[0], 30_000, 50);
    expect(fake.callsOf('getMe')).toHaveLength(1);
    expect((commands.params.commands as Array<{ command: string }>).map((c) => c.command)).toEqual(
      expect.arrayContaining(['help', 'new', 'list', 'switch', 'reload', 'upload']),
    );
  });

  it('refuses an update with a wrong or missing secret token with 401, and does nothing', async () => {
    const before = fake.calls.length;
    const wrong = await post(textMessage('hello'), 'not-the-secret');
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { detail: string }).detail).toMatch(/X-Telegram-Bot-Api-Secret-Token/);
    expect((await post(textMessage('hello'), null)).status).toBe(401);
    expect(fake.calls.length).toBe(before);
    expect(await sessions()).toEqual([]);
  });

  it('answers a message: the chat becomes a thread of the tenant, the answer is Telegram HTML', async () => {
    const before = fake.calls.length;
    expect((await post(textMessage('hello'))).status).toBe(200);
    const answer = await waitSent(/Hello/, before);
    expect(answer.params).toMatchObject({ chat_id: CHAT, parse_mode: 'HTML', text: '<b>Hello</b> from &lt;AgentLoop&gt; &amp; co' });
    expect(fake.callsOf('sendChatAction', before).map((c) => c.params.action)).toContain('typing');
    const [thread, ...more] = await sessions();
    expect(more).toEqual([]);
    const values = (await client().threads.getState(thread!.thread_id)).values as { messages: Array<{ type: string; content: unknown }> };
    expect(values.messages.map((m) => [m.type, m.content])).toEqual([
      ['human', 'hello'],
      ['ai', '**Hello** from <AgentLoop> & co'],
    ]);
    // Another tenant's key does not see the chat's thread.
    const other = new Client({ apiUrl: server.url, apiKey: 'other-key' });
    expect(await other.threads.search({ metadata: { client: 'agentloop-telegram' } })).toEqual([]);
  });

  it('uploads a document into the workspace and sends the outputs/ artifact back with sendDocument', async () => {
    const before = fake.calls.length;
    fake.files.set('doc-1', Buffer.from('buy milk\n'));
    await post({
      message: {
        message_id: messageId++,
        date: Math.floor(Date.now() / 1000),
        chat: { id: CHAT, type: 'private' },
        from: from(USER),
        caption: 'summarize notes.txt',
        document: { file_id: 'doc-1', file_unique_id: 'u-doc-1', file_name: 'notes.txt', mime_type: 'text/plain' },
      },
    });
    await waitSent(/Uploaded: notes\.txt → uploads\/notes\.txt/, before);
    const doc = await poll(async () => fake.callsOf('sendDocument', before)[0], 30_000, 50);
    expect(doc.document?.name).toBe('summary.txt');
    expect(doc.document?.data.toString('utf8')).toBe('Summary: buy milk');
    expect(doc.params).toMatchObject({ chat_id: CHAT, caption: 'outputs/summary.txt' });
    // Tool progress by display name: one message, edited when the tool is done.
    const started = await waitSent(/⚙️ Write File…/, before);
    expect(started.params.parse_mode).toBe('HTML');
    await waitSent(/✅ Write File/, before, 'editMessageText');
    await waitSent(/Wrote outputs\/summary\.txt/, before);
    const [thread] = await sessions();
    expect(await files(thread!.thread_id)).toEqual(expect.arrayContaining(['uploads/notes.txt', 'outputs/summary.txt']));
    const values = (await client().threads.getState(thread!.thread_id)).values as { messages: Array<{ type: string; content: unknown }> };
    expect(String(values.messages.filter((m) => m.type === 'human').at(-1)?.content)).toContain('uploads/notes.txt');
  });

  it('asks an approval with inline buttons; only the chat user can answer; Approve resumes the run', async () => {
    const before = fake.calls.length;
    await post(textMessage('save the key'));
    const prompt = await waitSent(/Approval needed/, before);
    const keyboard = (prompt.params.reply_markup as { inline_keyboard: Array<Array<{ text: string; callback_data: string }>> }).inline_keyboard[0]!;
    expect(keyboard.map((b) => b.text)).toEqual(['✅ Approve', '❌ Reject']);
    const [thread] = await sessions();
    const press = (user: number, id: string) =>
      post({
        callback_query: {
          id,
          from: from(user),
          chat_instance: 'ci-1',
          message: { message_id: 1, date: 0, chat: { id: CHAT, type: 'private' }, text: 'Approval needed' },
          data: keyboard[0]!.callback_data,
        },
      });

    await press(STRANGER, 'cb-stranger');
    const refused = await poll(async () => fake.callsOf('answerCallbackQuery', before).find((c) => c.params.callback_query_id === 'cb-stranger'), 30_000, 50);
    expect(refused.params).toMatchObject({ show_alert: true, text: expect.stringMatching(/Only the person who asked/) });
    expect((await client().threads.get(thread!.thread_id)).status).toBe('interrupted');
    expect(await files(thread!.thread_id)).not.toContain('outputs/config.env');

    await press(USER, 'cb-user');
    await poll(
      async () => fake.callsOf('answerCallbackQuery', before).find((c) => c.params.callback_query_id === 'cb-user' && c.params.text === 'Approved'),
      30_000,
      50,
    );
    await waitSent(/✅ Approved by Ada/, before, 'editMessageText');
    await waitSent(/Saved the key\./, before);
    expect(await files(thread!.thread_id)).toContain('outputs/config.env');
  });

  it('an ask_human question is answered by the next message', async () => {
    const before = fake.calls.length;
    await post(textMessage('paint it'));
    await waitSent(/❓ Which color\?/, before);
    await post(textMessage('blue'));
    await waitSent(/Blue it is\./, before);
    const [thread] = await sessions();
    const values = (await client().threads.getState(thread!.thread_id)).values as { messages: Array<{ type: string; name?: string; content: unknown }> };
    expect(String(values.messages.filter((m) => m.type === 'tool').at(-1)?.content)).toContain('blue');
  });

  it('/new starts a titled session, /list lists both, /switch goes back; the current one is kept in thread metadata', async () => {
    const before = fake.calls.length;
    await post(textMessage('/new Second'));
    await waitSent(/New session: \w{8} {2}Second/, before);
    const all = await sessions();
    expect(all.map((t) => t.metadata?.title ?? null)).toEqual([null, 'Second']);
    await post(textMessage('/list'));
    const list = await waitSent(/Sessions/, before);
    expect(sentText(list)).toMatch(/ {2}1\. \w{8} {2}\(untitled\)[\s\S]*\* {2}2\. \w{8} {2}Second/);
    await post(textMessage('/switch 1'));
    await waitSent(/Switched to \w{8} {2}\(untitled\)/, before);
    const selected = (await sessions()).map((t) => String(t.metadata?.selected_at));
    expect(selected[0]! > selected[1]!).toBe(true);
  });

  it('/usage shows the session\u2019s tokens and the tenant\u2019s from GET /usage, today and this month, with the budget and its reset', async () => {
    const before = fake.calls.length;
    await post(textMessage('/usage'));
    const text = sentText(await waitSent(/Budget: /, before));
    const ledger = (await (await fetch(`${server.url}/usage?group_by=day`, { headers: { 'x-api-key': API_KEY } })).json()) as {
      from: string;
      to: string;
      totals: { total_tokens: number };
      by_day: Array<{ day: string; total_tokens: number }>;
      budget: { monthly: { limit: number; used: number; resets_at: string } };
    };
    expect(ledger.totals.total_tokens).toBeGreaterThan(0);
    const today = ledger.by_day.find((d) => d.day === ledger.to)?.total_tokens ?? 0;
    expect(text).toMatch(/Session: \d+ tokens/);
    expect(text).toContain(`Tenant acme today: ${today} tokens`);
    expect(text).toContain(`Tenant acme this month (${ledger.from} to ${ledger.to}): ${ledger.totals.total_tokens} tokens`);
    const m = ledger.budget.monthly;
    expect(text).toContain(`Budget: monthly budget: ${m.used} of 1000000 tokens used, resets ${m.resets_at}`);
  });

  it('/reload with the chats\u2019 tenant key says clearly that it is admin only', async () => {
    const before = fake.calls.length;
    await post(textMessage('/reload'));
    await waitSent(/Reload refused: 403: Admin only/, before);
  });
});

describe('Telegram channel (long polling, embedded)', () => {
  const env: NodeJS.ProcessEnv = {};
  let fake: FakeTelegram;
  beforeAll(async () => {
    fake = await startFakeTelegram();
    Object.assign(env, {
      ALLOW_SCRIPTED_MODEL: 'true',
      TELEGRAM_BOT_TOKEN: FAKE_BOT_TOKEN,
      TELEGRAM_MODE: 'polling',
      TELEGRAM_API_ROOT: fake.apiRoot,
      TELEGRAM_ALLOWED_CHATS: String(CHAT),
      TELEGRAM_RUN_CONFIG: JSON.stringify([scripted([{ content: 'Polled and answered.', delay_ms: 4000 }]), scripted([{ content: 'Second answer.' }])]),
    });
  });
  afterAll(async () => {
    await fake?.close();
  });
  const server = useEmbeddedServer('agentloop-telegram-poll-', env);

  it('fetches updates with getUpdates and answers; a message during a run is queued; a chat not allowed is turned away', async () => {
    await poll(async () => fake.callsOf('setMyCommands')[0], 30_000, 50);
    fake.push({ update_id: 1, ...textMessage('hi') });
    const client = new Client({ apiUrl: server.url });
    const thread = await poll(async () => (await client.threads.search({ metadata: { client: 'agentloop-telegram', chat_id: String(CHAT) } }))[0], 30_000, 50);
    await poll(async () => ((await client.runs.list(thread.thread_id)).some((r) => r.status === 'running') ? true : undefined), 30_000, 50);
    fake.push({ update_id: 2, ...textMessage('and another thing') });
    await poll(async () => fake.callsOf('sendMessage').find((c) => /⏳ Queued/.test(sentText(c))), 30_000, 50);
    const second = await poll(async () => fake.callsOf('sendMessage').find((c) => sentText(c) === 'Second answer.'), 30_000, 50);
    const answers = fake
      .callsOf('sendMessage')
      .filter((c) => c.params.parse_mode === 'HTML')
      .map(sentText);
    expect(answers).toEqual(['Polled and answered.', 'Second answer.']);
    expect(second.params.chat_id).toBe(CHAT);
    const outsider = textMessage('let me in');
    fake.push({ update_id: 3, message: { ...outsider.message, chat: { id: 999, type: 'private' }, from: from(999) } });
    const refusal = await poll(async () => fake.callsOf('sendMessage').find((c) => c.params.chat_id === 999), 30_000, 50);
    expect(sentText(refusal)).toBe('This bot does not serve this chat.');
  });
});

describe('Telegram channel (webhook mode, cluster)', () => {
  const env: NodeJS.ProcessEnv = {};
  let fake: FakeTelegram;
  beforeAll(async () => {
    fake = await startFakeTelegram();
    Object.assign(env, {
      AGENTLOOP_API_KEYS: `${API_KEY}:acme`,
      TELEGRAM_BOT_TOKEN: FAKE_BOT_TOKEN,
      TELEGRAM_MODE: 'webhook',
      TELEGRAM_WEBHOOK_SECRET: SECRET,
      TELEGRAM_API_ROOT: fake.apiRoot,
      TELEGRAM_API_KEY: API_KEY,
      TELEGRAM_RUN_CONFIG: JSON.stringify([RUNS[2], RUNS[3]]),
    });
  });
  afterAll(async () => {
    await fake?.close();
  });
  const cluster = useCluster({ env });

  it('an approval asked in a chat is resumed by its button through the gateway, queue and orchestrator', async () => {
    const { url } = cluster();
    await poll(async () => fake.callsOf('setMyCommands')[0], 60_000, 100);
    const post = (update: Record<string, unknown>) =>
      fetch(`${url}/channels/telegram/webhook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': SECRET },
        body: JSON.stringify({ update_id: updateId++, ...update }),
      });
    expect((await post(textMessage('save the key'))).status).toBe(200);
    const prompt = await poll(async () => fake.callsOf('sendMessage').find((c) => /Approval needed/.test(sentText(c))), 60_000, 100);
    const approve = (prompt.params.reply_markup as { inline_keyboard: Array<Array<{ callback_data: string }>> }).inline_keyboard[0]![0]!.callback_data;
    await post({
      callback_query: {
        id: 'cb-cluster',
        from: from(USER),
        chat_instance: 'ci-2',
        message: { message_id: 1, date: 0, chat: { id: CHAT, type: 'private' }, text: 'Approval needed' },
        data: approve,
      },
    });
    await poll(async () => fake.callsOf('sendMessage').find((c) => sentText(c) === 'Saved the key.'), 60_000, 100);
    const doc = await poll(async () => fake.callsOf('sendDocument')[0], 30_000, 100);
    expect(doc.document?.data.toString('utf8')).toBe('API_KEY=abc123');
  }, 180_000);
});
