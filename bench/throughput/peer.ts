/**
 * The peer: the open LangGraph server (`@langchain/langgraph-api`, started by
 * `@langchain/langgraph-cli dev`, in-memory) serving peer-graph/graph.ts.
 *
 * It is not one of the repository's dependencies: the first run installs it into
 * bench/throughput/.peer/ (gitignored) with the versions pinned below — the newest
 * langgraph-cli/api whose peer ranges accept the LangGraph and LangChain core versions
 * the root uses, so both sides run the same LangGraph.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@agentloop/devservers';
import { spawnLogged, waitHttpOk, type Spawned } from './proc.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const PEER_DIR = path.join(here, '.peer');

/** Exact versions; `npm view @langchain/langgraph-api@<v> peerDependencies` to move them. */
export const PEER_PACKAGES: Record<string, string> = {
  '@langchain/langgraph-cli': '1.5.1',
  '@langchain/langgraph-api': '1.5.1',
  '@langchain/langgraph': '1.7.3',
  '@langchain/langgraph-checkpoint': '1.2.2',
  '@langchain/langgraph-sdk': '1.15.0',
  '@langchain/core': '1.4.0',
  typescript: '5.9.3',
  zod: '4.6.7',
};

function installed(): boolean {
  for (const [name, version] of Object.entries(PEER_PACKAGES)) {
    const pkg = path.join(PEER_DIR, 'node_modules', name, 'package.json');
    if (!existsSync(pkg)) return false;
    if ((JSON.parse(readFileSync(pkg, 'utf8')) as { version?: string }).version !== version) return false;
  }
  return true;
}

/** Installs the peer into .peer/ unless the pinned versions are already there. */
export function ensurePeerInstalled(log: (s: string) => void): void {
  if (installed()) return;
  mkdirSync(PEER_DIR, { recursive: true });
  const manifest = { name: 'agentloop-bench-peer', private: true, type: 'module', dependencies: PEER_PACKAGES };
  writeFileSync(path.join(PEER_DIR, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');
  log(`installing the peer into ${path.relative(process.cwd(), PEER_DIR)} (first run, ~30 s)...`);
  const res = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: PEER_DIR, stdio: 'inherit' });
  if (res.status !== 0 || !installed()) throw new Error(`npm install of the peer in ${PEER_DIR} failed (exit ${res.status})`);
}

export interface PeerServer {
  url: string;
  proc: Spawned;
}

/** Starts `langgraphjs dev` (in-memory, no reload, no browser) on a free port. */
export async function startPeer(opts: { logFile: string; jobsPerWorker: number; env?: NodeJS.ProcessEnv }): Promise<PeerServer> {
  copyFileSync(path.join(here, 'peer-graph', 'graph.ts'), path.join(PEER_DIR, 'graph.ts'));
  // langgraph dev reloads its in-memory store from here: start empty, like AgentLoop's fresh data dirs.
  rmSync(path.join(PEER_DIR, '.langgraph_api'), { recursive: true, force: true });
  writeFileSync(path.join(PEER_DIR, 'langgraph.json'), JSON.stringify({ node_version: '20', graphs: { agent: './graph.ts:graph' } }, null, 2) + '\n');
  const port = await freePort();
  const cli = path.join(PEER_DIR, 'node_modules', '@langchain', 'langgraph-cli', 'dist', 'cli', 'cli.mjs');
  const args = [
    cli,
    'dev',
    '--port',
    String(port),
    '--host',
    '127.0.0.1',
    '--no-browser',
    '--no-reload',
    '--n-jobs-per-worker',
    String(opts.jobsPerWorker),
    '--config',
    path.join(PEER_DIR, 'langgraph.json'),
  ];
  const proc = spawnLogged(process.execPath, args, {
    cwd: PEER_DIR,
    logFile: opts.logFile,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      BROWSER: 'none',
      LANGGRAPH_CLI_NO_ANALYTICS: '1',
      LANGSMITH_TRACING: 'false',
      LANGCHAIN_TRACING_V2: 'false',
      ...opts.env,
    },
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitHttpOk(`${url}/ok`, proc.exited, 120_000, 'langgraph dev');
  } catch (err) {
    await proc.stop(2_000);
    throw err;
  }
  return { url, proc };
}
