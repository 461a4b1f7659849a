/**
 * `agentloop chat` in a real terminal (issue 13): the built CLI runs in a tmux pane against an
 * embedded AgentLoop with the scripted model; the test types like a person, reads the pane, and
 * checks every effect through the API with the SDK.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { Client } from '@langchain/langgraph-sdk';
import { poll, scripted, useEmbeddedServer } from './helpers.js';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../apps/cli/bin/agentloop.js');
const tmux = (...args: string[]) => execFileSync('tmux', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** One `agentloop chat` in a detached 120x40 tmux session. */
function startCli(name: string, opts: { url: string; home: string; config: unknown }) {
  const script = path.join(opts.home, `${name}.sh`);
  writeFileSync(
    script,
    [
      '#!/bin/sh',
      `export AGENTLOOP_CLI_HOME='${opts.home}'`,
      `export AGENTLOOP_CLI_CONFIG='${JSON.stringify(opts.config)}'`,
      `exec node '${BIN}' chat --url '${opts.url}'`,
    ].join('\n'),
    { mode: 0o755 },
  );
  tmux('new-session', '-d', '-s', name, '-x', '120', '-y', '40', script);
  const pane = () => {
    try {
      return tmux('capture-pane', '-p', '-J', '-S', '-3000', '-t', name);
    } catch {
      return '';
    }
  };
  const alive = () => {
    try {
      tmux('has-session', '-t', name);
      return true;
    } catch {
      return false;
    }
  };
  let mark = 0;
  return {
    pane,
    alive,
    /** Waits for the prompt, types a line and presses Enter; later waits only look at what comes after it. */
    async type(text: string, prompt = 'You>') {
      await poll(async () => (pane().trimEnd().endsWith(prompt) ? true : undefined), 30_000, 50);
      mark = pane().trimEnd().length;
      tmux('send-keys', '-t', name, '-l', text);
      tmux('send-keys', '-t', name, 'Enter');
    },
    keys(...keys: string[]) {
      tmux('send-keys', '-t', name, ...keys);
    },
    /** Resolves with the pane text after the last typed line once it matches re. */
    async waitFor(re: RegExp, timeoutMs = 30_000): Promise<string> {
      return poll(
        async () => {
          const text = pane().slice(Math.max(0, mark - 200));
          return re.test(text) ? text : undefined;
        },
        timeoutMs,
        100,
      ).catch((err: unknown) => {
        throw new Error(`${(err as Error).message}: ${re} not in the pane:\n${pane()}`);
      });
    },
    /** Resolves once the CLI waits for the next line (typing earlier would go nowhere). */
    async idle() {
      await poll(async () => (pane().trimEnd().endsWith('You>') ? true : undefined), 30_000, 100);
    },
    async exited() {
      await poll(async () => (alive() ? undefined : true), 15_000, 100);
    },
    kill() {
      if (alive()) tmux('kill-session', '-t', name);
    },
  };
}

const server = useEmbeddedServer('agentloop-cli-', { ALLOW_SCRIPTED_MODEL: 'true' });

describe('agentloop chat in a pseudo-terminal', () => {
  const home = mkdtempSync(path.join(tmpdir(), 'agentloop-cli-home-'));
  const tag = `al-cli-${process.pid}`;
  const clis: Array<ReturnType<typeof startCli>> = [];
  afterAll(() => {
    clis.forEach((c) => c.kill());
    rmSync(home, { recursive: true, force: true });
  });
  const currentId = () =>
    (JSON.parse(readFileSync(path.join(home, 'cli.json'), 'utf8')) as { chats: { terminal: { current: string } } }).chats.terminal.current;
  const mine = (client: Client) => client.threads.search({ metadata: { client: 'agentloop-cli' }, limit: 100 });

  it('streams answers, shows tools by display name, asks approvals, and runs every slash command with its effect on the server', async () => {
    const client = new Client({ apiUrl: server.url });
    const secretWrite = { name: 'write_file', args: { file_path: 'outputs/config.env', content: 'API_KEY=abc123' } };

    // 1. A turn: a secret write waits for approval, approved inline, then the streamed answer.
    const first = startCli(`${tag}-1`, {
      url: server.url,
      home,
      config: [scripted([{ tool_calls: [secretWrite] }]), scripted([{ content: 'Saved the **config** file.' }])],
    });
    clis.push(first);
    await first.waitFor(/You> /);
    await first.type('save my key');
    await first.waitFor(/Approval needed: Write File \(write_file\)[\s\S]*Approve\? \[y\]es/);
    await first.type('y', '[n]o:');
    const answered = await first.waitFor(/Agent> Saved the config file\.[\s\S]*outputs\/config\.env/);
    await first.idle();
    expect(answered).toMatch(/✔ Write File/);
    expect(answered).toMatch(/outputs\/config\.env/); // the new output file, sent back
    const alpha = currentId();
    const files = (await (await fetch(`${server.url}/threads/${alpha}/files`)).json()) as { files: Array<{ path: string }> };
    expect(files.files.map((f) => f.path)).toContain('outputs/config.env');

    await first.type('/name Alpha');
    await first.waitFor(/is now "Alpha"/);
    expect((await client.threads.get(alpha)).metadata).toMatchObject({ title: 'Alpha', client: 'agentloop-cli' });

    await first.type('/exit');
    await first.exited();

    // 2. A restart keeps the session; the other commands.
    const second = startCli(`${tag}-2`, { url: server.url, home, config: scripted([{ content: 'The summary.' }, { content: 'Done.' }]) });
    clis.push(second);
    await second.waitFor(new RegExp(`Session ${alpha.slice(0, 8)} Alpha`));
    await second.type('/current');
    await second.waitFor(new RegExp(`Current session: ${alpha}`));

    await second.type('/usage');
    const usage = await second.waitFor(/Budget: .+/);
    const tokens = ((await client.threads.getState(alpha)).values as { token_usage: { thread: { total_tokens: number } } }).token_usage.thread.total_tokens;
    expect(tokens).toBeGreaterThan(0);
    expect(usage).toContain(`Session: ${tokens} tokens`);
    // The tenant's figures come from GET /usage (the ledger), today and this month.
    const ledger = (await (await fetch(`${server.url}/usage?group_by=day&tenant_id=default`)).json()) as {
      from: string;
      to: string;
      totals: { total_tokens: number };
      by_day: Array<{ day: string; total_tokens: number }>;
    };
    expect(ledger.totals.total_tokens).toBeGreaterThanOrEqual(tokens);
    const today = ledger.by_day.find((d) => d.day === ledger.to)?.total_tokens ?? 0;
    expect(usage).toContain(`Tenant default today: ${today} tokens`);
    expect(usage).toContain(`Tenant default this month (${ledger.from} to ${ledger.to}): ${ledger.totals.total_tokens} tokens`);
    expect(usage).toContain('Budget: no budget set');

    await second.type('/compact');
    await second.waitFor(/✓ Conversation compacted/);
    await second.idle();
    const compacted = (await client.threads.getState(alpha)).values as { messages: Array<{ type: string; name?: string; content: unknown }> };
    expect(compacted.messages.map((m) => [m.type, m.name ?? '', typeof m.content === 'string' ? m.content : ''])).toContainEqual([
      'system',
      'conversation_summary',
      'The summary.',
    ]);
    expect(compacted.messages.some((m) => m.type === 'human' && m.content === 'save my key')).toBe(false);

    // After /compact: the server adds the upload notice to the next user message, and "/compact" must stay exact.
    const notes = path.join(home, 'notes.txt');
    writeFileSync(notes, 'meeting notes');
    await second.type(`/upload ${notes}`);
    await second.waitFor(/Uploaded: notes\.txt → uploads\/notes\.txt/);
    const afterUpload = (await (await fetch(`${server.url}/threads/${alpha}/files`)).json()) as { files: Array<{ path: string }> };
    expect(afterUpload.files.map((f) => f.path)).toContain('uploads/notes.txt');

    await second.type('/new Beta');
    await second.waitFor(/New session: \w{8} {2}Beta/);
    const beta = currentId();
    expect(beta).not.toBe(alpha);
    expect((await client.threads.get(beta)).metadata).toMatchObject({ title: 'Beta' });

    await second.type('/list');
    await second.waitFor(/1\. \w{8} {2}Alpha[\s\S]*\* +2\. \w{8} {2}Beta/);
    await second.type('/switch 1');
    await second.waitFor(/Switched to \w{8} {2}Alpha/);
    expect(currentId()).toBe(alpha);
    await second.type(`/load ${beta.slice(0, 8)}`);
    await second.waitFor(new RegExp(`Loaded session: ${beta}`));
    expect(currentId()).toBe(beta);
    await second.type('/sessions');
    await second.waitFor(/Sessions[\s\S]*Beta/);

    await second.type('/clear');
    await second.waitFor(/Conversation cleared, new session/);
    const cleared = currentId();
    expect((await mine(client)).map((t) => t.thread_id).sort()).toEqual([alpha, beta, cleared].sort());

    await second.type('/reset');
    await second.waitFor(/Reset \(deleted \w{8} and its workspace\), new session/);
    const fresh = currentId();
    await expect(client.threads.get(cleared)).rejects.toMatchObject({ status: 404 });
    expect((await mine(client)).map((t) => t.thread_id).sort()).toEqual([alpha, beta, fresh].sort());

    await second.type('/clean');
    await second.waitFor(/Cleaned up 0 old session/); // nothing is 7 days old
    await second.type('/clean 0');
    await second.waitFor(/Cleaned up 2 old session/);
    expect((await mine(client)).map((t) => t.thread_id)).toEqual([fresh]);

    await second.type('/reload');
    await second.waitFor(/Reloaded:[\s\S]*tool-runner \(.*\) ✓ \d+ tools/);
    await second.type('/bogus');
    await second.waitFor(/Unknown command: \/bogus\. Valid commands: \/help .*\/quit/);
    await second.type('/help');
    await second.waitFor(/Commands:[\s\S]*\/upload <path>\.\.\./);

    await second.type('hello');
    await second.waitFor(/Agent> The summary\./);
    await second.idle();
    await second.type('/quit');
    await second.exited();

    // 3. Ctrl-C cancels a running run; a second Ctrl-C exits.
    const third = startCli(`${tag}-3`, { url: server.url, home, config: scripted([{ content: 'too slow', delay_ms: 120_000 }]) });
    clis.push(third);
    await third.waitFor(/You> /);
    await third.type('take your time');
    const running = await poll(async () => (await client.runs.list(fresh)).find((r) => r.status === 'running'));
    third.keys('C-c');
    await third.waitFor(/Run cancelled\./);
    await poll(async () => ((await client.runs.get(fresh, running.run_id)).status === 'interrupted' ? true : undefined));
    third.keys('C-c');
    await third.exited();
  });

  it('queues lines typed while a run streams and sends them after it, in order', async () => {
    const client = new Client({ apiUrl: server.url });
    const ownHome = mkdtempSync(path.join(tmpdir(), 'agentloop-cli-queue-'));
    const cli = startCli(`${tag}-queue`, {
      url: server.url,
      home: ownHome,
      config: [scripted([{ content: 'first answer', delay_ms: 8000 }]), scripted([{ content: 'second answer' }])],
    });
    clis.push(cli);
    try {
      await cli.type('/new Queue');
      await cli.waitFor(/New session/);
      const thread = (JSON.parse(readFileSync(path.join(ownHome, 'cli.json'), 'utf8')) as { chats: { terminal: { current: string } } }).chats.terminal.current;
      await cli.type('one');
      await poll(async () => ((await client.runs.list(thread)).some((r) => r.status === 'running') ? true : undefined));
      // Typed while the run streams: no prompt is waiting for it.
      cli.keys('-l', 'two');
      cli.keys('Enter');
      await cli.waitFor(/Queued \(1\): two/);
      await cli.waitFor(/Agent> first answer[\s\S]*You> two \(queued\)[\s\S]*Agent> second answer/);
      const values = (await client.threads.getState(thread)).values as { messages: Array<{ type: string; content: unknown }> };
      expect(values.messages.filter((m) => m.type === 'human').map((m) => m.content)).toEqual(['one', 'two']);
      await cli.idle();
      await cli.type('/quit');
      await cli.exited();
    } finally {
      rmSync(ownHome, { recursive: true, force: true });
    }
  });
});
