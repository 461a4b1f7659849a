import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, type Config } from '@langchain/langgraph-sdk';
import { startEmbedded, type EmbeddedServer } from '@agentloop/agentloop-app';
import type { ApprovalAnswer, ApprovalPrompt, Channel, OutgoingFile, ToolActivity, ToolOutcome } from './channel.js';
import { ChatEngine } from './chat-engine.js';
import { JsonFileSessionState } from './session-state.js';

const scripted = (turns: unknown[]): Config => ({ configurable: { model: { provider: 'scripted', turns } } });

/** A channel that records what the engine sends and answers prompts from a script. */
class RecordingChannel implements Channel {
  chatId = 'chat-1';
  tokens: string[] = [];
  answers: string[] = [];
  tools: Array<[string, ToolActivity['displayName'], ToolOutcome | 'started']> = [];
  notices: string[] = [];
  files: OutgoingFile[] = [];
  approvals: ApprovalPrompt[] = [];
  questions: string[] = [];
  constructor(
    private readonly approve: ApprovalAnswer = { type: 'approve' },
    private readonly answer = 'blue',
  ) {}
  answerToken(text: string) {
    this.tokens.push(text);
  }
  async answerDone(text: string) {
    this.answers.push(text);
  }
  toolStarted(t: ToolActivity) {
    this.tools.push([t.name, t.displayName, 'started']);
  }
  toolFinished(t: ToolActivity, outcome: ToolOutcome) {
    this.tools.push([t.name, t.displayName, outcome]);
  }
  async askApproval(p: ApprovalPrompt) {
    this.approvals.push(p);
    return this.approve;
  }
  async askQuestion(q: string) {
    this.questions.push(q);
    return this.answer;
  }
  async notice(text: string) {
    this.notices.push(text);
  }
  async sendFile(f: OutgoingFile) {
    this.files.push(f);
  }
}

describe('ChatEngine against an embedded AgentLoop', () => {
  let server: EmbeddedServer;
  let dir: string;
  let client: Client;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'agentloop-channel-'));
    server = await startEmbedded({ env: { DATA_DIR: dir, LOG_LEVEL: 'warn', ALLOW_SCRIPTED_MODEL: 'true' }, port: 0 });
    client = new Client({ apiUrl: server.url });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const engineWith = (channel: Channel, configs: Config[], stateFile = path.join(dir, `state-${Math.random()}.json`)) => {
    let run = 0;
    return new ChatEngine({
      client,
      access: { apiUrl: server.url },
      channel,
      state: new JsonFileSessionState(stateFile),
      clientName: 'channel-test',
      run: { assistantId: 'agent', config: () => configs[Math.min(run++, configs.length - 1)] },
    });
  };

  it('streams the answer in several tokens, shows the tool by display name and sends the new output file', async () => {
    const channel = new RecordingChannel();
    const engine = engineWith(channel, [
      scripted([
        { tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/hello.txt', content: 'hi there' } }] },
        { content: 'I wrote the file for you, have a look.' },
      ]),
    ]);
    const outcome = await engine.send('write hello');
    expect(outcome.status).toBe('done');
    expect(channel.tokens.length).toBeGreaterThan(1);
    expect(channel.tokens.join('')).toBe('I wrote the file for you, have a look.');
    expect(channel.answers).toEqual(['I wrote the file for you, have a look.']);
    expect(channel.tools).toEqual([
      ['write_file', 'Write File', 'started'],
      ['write_file', 'Write File', 'ok'],
    ]);
    expect(channel.files.map((f) => f.path)).toEqual(['outputs/hello.txt']);
    expect(new TextDecoder().decode(await channel.files[0]!.download())).toBe('hi there');
  });

  it('answers ask_human through the channel and resumes the run with the answer', async () => {
    const channel = new RecordingChannel({ type: 'approve' }, 'blue');
    const engine = engineWith(channel, [
      scripted([{ tool_calls: [{ name: 'ask_human', args: { question: 'Which color?' } }] }]),
      scripted([{ content: 'Blue it is.' }]),
    ]);
    const outcome = await engine.send('paint it');
    expect(outcome.status).toBe('done');
    expect(channel.questions).toEqual(['Which color?']);
    const thread = (await engine.sessions.current())!.threadId;
    const messages = (await client.threads.getState(thread)).values as { messages: Array<{ type: string; content: unknown }> };
    expect(messages.messages.filter((m) => m.type === 'tool').map((m) => m.content)).toEqual([expect.stringContaining('blue')]);
    expect(channel.answers.at(-1)).toBe('Blue it is.');
  });

  it('a rejected approval does not run the tool and tells the model why', async () => {
    const channel = new RecordingChannel({ type: 'reject', message: 'not in prod' });
    const secret = { name: 'write_file', args: { file_path: 'outputs/prod.env', content: 'password=hunter2' } };
    const engine = engineWith(channel, [scripted([{ tool_calls: [secret] }]), scripted([{ content: 'Understood.' }])]);
    await engine.send('save prod');
    expect(channel.approvals).toMatchObject([{ tool: 'write_file', displayName: 'Write File', allowed: expect.arrayContaining(['approve', 'reject']) }]);
    const thread = (await engine.sessions.current())!.threadId;
    const files = await engine.files.list(thread);
    expect(files.map((f) => f.path)).not.toContain('outputs/prod.env');
    const values = (await client.threads.getState(thread)).values as { messages: Array<{ type: string; content: unknown }> };
    expect(String(values.messages.find((m) => m.type === 'tool')?.content)).toContain('not in prod');
  });

  it('names each session with a random id, so sessions made in the same minute load by the 8 characters /sessions shows', async () => {
    const channel = new RecordingChannel();
    channel.chatId = 'chat-prefixes';
    const engine = engineWith(channel, [scripted([{ content: 'ok' }])]);
    for (const title of ['One', 'Two', 'Three']) await engine.handle({ text: `/new ${title}` });
    const sessions = await engine.sessions.list();
    expect(sessions.every((s) => s.threadId[14] === '4')).toBe(true);
    for (const s of sessions) {
      await engine.handle({ text: `/load ${s.threadId.slice(0, 8)}` });
      expect((await engine.sessions.current())?.threadId).toBe(s.threadId);
    }
  });

  it('keeps sessions per chat across engines, and answers bad commands with the valid ones', async () => {
    const stateFile = path.join(dir, 'shared-state.json');
    const channel = new RecordingChannel();
    channel.chatId = 'chat-sessions'; // its own chat: the other tests' sessions belong to chat-1
    const first = engineWith(channel, [scripted([{ content: 'ok' }])], stateFile);
    await first.handle({ text: '/new First' });
    await first.handle({ text: '/new Second' });
    const second = engineWith(channel, [scripted([{ content: 'ok' }])], stateFile);
    expect((await second.sessions.current())?.title).toBe('Second');
    expect((await second.sessions.list()).map((s) => s.title)).toEqual(['First', 'Second']);
    const threads = await client.threads.search({ metadata: { client: 'channel-test', chat_id: 'chat-sessions' } });
    expect(threads.map((t) => t.metadata?.title).sort()).toEqual(['First', 'Second']);

    channel.notices = [];
    await second.handle({ text: '/switch 9' });
    await second.handle({ text: '/load zzzz' });
    await second.handle({ text: '/frobnicate' });
    await second.handle({ text: '/name' });
    expect(channel.notices).toEqual([
      'No session #9: /list shows the sessions.',
      '✗ Session not found: zzzz (no session starts with it)',
      expect.stringMatching(/^Unknown command: \/frobnicate\. Valid commands: \/help \/usage .* \/exit \/quit$/),
      'Usage: /name <title>',
    ]);
    expect(await second.handle({ text: '/quit' })).toEqual({ exit: true });
  });
});
