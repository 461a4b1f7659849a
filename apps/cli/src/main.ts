import os from 'node:os';
import path from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import type { Config } from '@langchain/langgraph-sdk';
import { chat } from './chat.js';

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

program.parseAsync().catch((err: unknown) => {
  process.stderr.write(`agentloop: ${(err as Error).message}\n`);
  process.exit(1);
});
