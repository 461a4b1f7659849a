import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import { Client, type Config } from '@langchain/langgraph-sdk';
import pc from 'picocolors';
import { ChatEngine, JsonFileSessionState } from '@agentloop/channel';
import { TerminalChannel } from './terminal-channel.js';

export interface ChatOptions {
  url: string;
  apiKey?: string;
  assistant: string;
  /** Run config; an array gives one per run (a resume is a run), the last repeating. */
  config?: Config | Config[];
  /** The state file (current session), e.g. ~/.agentloop/cli.json. */
  stateFile: string;
}

function configPerRun(config: Config | Config[]): () => Config | undefined {
  if (!Array.isArray(config)) return () => config;
  let run = 0;
  return () => config[Math.min(run++, config.length - 1)];
}

/**
 * `agentloop chat`: reads lines until /exit, Ctrl-D or a second Ctrl-C; Ctrl-C during a run cancels it.
 * Lines typed during a run are queued and sent after it, in order.
 */
export async function chat(opts: ChatOptions): Promise<void> {
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: process.stdin.isTTY, historySize: 200 });
  const channel = new TerminalChannel(rl);
  const engine = new ChatEngine({
    client: new Client({ apiUrl: opts.url, ...(opts.apiKey ? { apiKey: opts.apiKey } : {}) }),
    access: { apiUrl: opts.url, ...(opts.apiKey ? { apiKey: opts.apiKey } : {}) },
    channel,
    state: new JsonFileSessionState(opts.stateFile),
    clientName: 'agentloop-cli',
    run: { assistantId: opts.assistant, ...(opts.config ? { config: configPerRun(opts.config) } : {}) },
    readLocalFile: async (p) => ({ name: path.basename(p), data: await readFile(p) }),
  });

  let interrupted = false;
  let closed = false;
  rl.on('close', () => (closed = true));
  // Lines typed while a run streams are not lost: readline emits them here (an active prompt takes
  // its own answer instead), and the loop sends them, in order, once the run is over.
  const queued: string[] = [];
  rl.on('line', (line) => {
    if (!line.trim()) return;
    queued.push(line);
    if (engine.busy) process.stdout.write(pc.dim(`\n⏳ Queued (${queued.length}): ${line} — sent when this run ends\n`));
  });
  rl.on('SIGINT', () => {
    // First Ctrl-C stops what runs (a run, a prompt); a second one, or one at an idle prompt, exits.
    if (!interrupted && engine.busy) {
      interrupted = true;
      process.stdout.write(pc.yellow('\nCancelling the run… (Ctrl-C again to exit)\n'));
      channel.abortPrompt();
      void engine.cancelRun();
      return;
    }
    rl.close();
  });

  const current = await engine.sessions.current();
  process.stdout.write(
    `${pc.bold('agentloop')} ${pc.dim(`${opts.url} · assistant ${opts.assistant}`)}\n` +
      (current ? `Session ${current.threadId.slice(0, 8)} ${current.title ?? ''}\n` : '') +
      pc.dim('Type a message, /help for commands, /exit to leave.\n'),
  );

  while (!closed) {
    let line: string;
    const next = queued.shift();
    if (next !== undefined) {
      line = next;
      process.stdout.write(`${pc.green('You>')} ${line} ${pc.dim('(queued)')}\n`);
    } else {
      try {
        line = await rl.question(pc.green('You> '));
      } catch {
        break; // closed (Ctrl-D, Ctrl-C at the prompt)
      }
    }
    interrupted = false;
    try {
      const result = await engine.handle({ text: line });
      if (result.exit) break;
    } catch (err) {
      if (closed) break;
      if (!interrupted) await channel.notice(`✗ ${describe(err, opts.url)}`, 'error');
    }
  }
  if (engine.busy) await engine.cancelRun();
  rl.close();
}

/** A failure as the person can act on it: an unreachable server says so and how to start one. */
function describe(err: unknown, url: string): string {
  const e = err as { message?: string; cause?: { code?: string } };
  if (e.message === 'fetch failed' || e.cause?.code === 'ECONNREFUSED') {
    return `Cannot reach ${url}: is AgentLoop running there? (\`npm start\` serves it on http://localhost:2024; --url points elsewhere)`;
  }
  return e.message ?? String(err);
}
