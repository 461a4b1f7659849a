import os from 'node:os';
import path from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import type { Config } from '@langchain/langgraph-sdk';
import { chat } from './chat.js';
import { formatOutcome, replayRun, saveRecordingFixture } from './replay.js';

/** One run config, or (testing) a list used by successive runs, the last one repeating. */
function parseConfig(text: string): Config | Config[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new InvalidArgumentError(`--config must be JSON, e.g. '{"configurable":{"model":"base"}}': ${(err as Error).message}`);
  }
  const isObject = (v: unknown) => !!v && typeof v === 'object' && !Array.isArray(v);
  if (Array.isArray(parsed) ? parsed.length === 0 || !parsed.every(isObject) : !isObject(parsed)) {
    throw new InvalidArgumentError('--config must be a JSON object, or a non-empty array of objects (one per run)');
  }
  return parsed as Config | Config[];
}

const program = new Command('agentloop').description('The terminal client of AgentLoop (and any LangGraph Platform server)');

program
  .command('chat')
  .description('Chat with an agent: streamed answers, tool calls, approvals, sessions and slash commands (/help)')
  .option('--url <url>', 'server URL (env AGENTLOOP_URL)', process.env.AGENTLOOP_URL ?? 'http://localhost:2024')
  .option('--api-key <key>', 'API key (env AGENTLOOP_API_KEY)', process.env.AGENTLOOP_API_KEY)
  .option('--assistant <id>', 'assistant id or graph name', 'agent')
  .option(
    '--config <json>',
    'advanced/testing: run config sent with every run, e.g. a scripted model; a JSON array gives one per run, the last repeating (env AGENTLOOP_CLI_CONFIG)',
    parseConfig,
    process.env.AGENTLOOP_CLI_CONFIG ? parseConfig(process.env.AGENTLOOP_CLI_CONFIG) : undefined,
  )
  .action(async (opts: { url: string; apiKey?: string; assistant: string; config?: Config | Config[] }) => {
    // Sessions survive restarts through this file (env AGENTLOOP_CLI_HOME moves it, e.g. for tests).
    const home = process.env.AGENTLOOP_CLI_HOME ?? path.join(os.homedir(), '.agentloop');
    await chat({ ...opts, stateFile: path.join(home, 'cli.json') });
    process.exit(0);
  });

const serverOptions = (c: Command) =>
  c
    .option('--url <url>', 'server URL (env AGENTLOOP_URL)', process.env.AGENTLOOP_URL ?? 'http://localhost:2024')
    .option('--api-key <key>', 'API key (env AGENTLOOP_API_KEY)', process.env.AGENTLOOP_API_KEY);

// Record and replay (issue 17).
serverOptions(program.command('replay <run_id>'))
  .description('Replay a recorded run (model answers from its recording) and print where it diverged; exit code 3 when it did')
  .option('--execute-tools', 'run the tools again instead of answering them from the recording')
  .option('--thread <thread_id>', 'replay on this thread (default: a new one)')
  .action(async (runId: string, opts: { url: string; apiKey?: string; executeTools?: boolean; thread?: string }) => {
    const outcome = await replayRun(opts, runId, { executeTools: !!opts.executeTools, threadId: opts.thread });
    process.stdout.write(`${formatOutcome(outcome)}\n`);
    process.exit(outcome.replay && !outcome.replay.diverged && outcome.status === 'success' ? 0 : 3);
  });

serverOptions(program.command('record-test <run_id>'))
  .description("Save a run's recording as a regression test fixture; tests/replays/replays.test.ts replays every fixture in its folder")
  .requiredOption('--out <file>', 'fixture file to write, e.g. tests/replays/my-bug.json')
  .action(async (runId: string, opts: { url: string; apiKey?: string; out: string }) => {
    const saved = await saveRecordingFixture(opts, runId, opts.out);
    process.stdout.write(`wrote ${saved.path} (${saved.events} recorded events); run it with: npx vitest run tests/replays\n`);
  });

program.parseAsync().catch((err: unknown) => {
  process.stderr.write(`agentloop: ${(err as Error).message}\n`);
  process.exit(1);
});
