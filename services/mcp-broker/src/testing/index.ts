/**
 * Test harness: real MCP servers to point the broker at (see echo-server.ts, malformed-server.ts,
 * elicit-server.ts).
 * From TypeScript sources they run through tsx; from dist, with plain node.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = fileURLToPath(import.meta.url);
const ext = path.extname(here);

export const ECHO_SERVER_SCRIPT = path.join(path.dirname(here), `echo-server${ext}`);
export const MALFORMED_SERVER_SCRIPT = path.join(path.dirname(here), `malformed-server${ext}`);
/** Tools that ask the user for input mid-call (elicit-server.ts). */
export const ELICIT_SERVER_SCRIPT = path.join(path.dirname(here), `elicit-server${ext}`);

/** How to run one of the test servers: `command` and `args` for mcp_servers.yaml or spawn(). */
export function serverCommand(script: string, extraArgs: readonly string[] = []): { command: string; args: string[] } {
  if (!script.endsWith('.ts')) return { command: process.execPath, args: [script, ...extraArgs] };
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  return { command: process.execPath, args: ['--conditions=@agentloop/source', '--import', tsx, script, ...extraArgs] };
}

export interface HttpMcpServer extends AsyncDisposable {
  /** The MCP endpoint: `http://127.0.0.1:<port>/mcp` (streamable HTTP) or `/sse` (legacy SSE). */
  url: string;
  process: ChildProcess;
  close(): Promise<void>;
}

/** Starts echo-server over streamable HTTP (`http`) or legacy SSE (`sse`) on 127.0.0.1, on a free port. */
export async function startHttpEchoServer(opts: { mode?: 'http' | 'sse'; token?: string } = {}): Promise<HttpMcpServer> {
  const mode = opts.mode ?? 'http';
  const { command, args } = serverCommand(ECHO_SERVER_SCRIPT, [`--${mode}`, '0']);
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH };
  if (opts.token) env.MCP_TEST_TOKEN = opts.token;
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`echo-server exited with ${code}: ${stderr}`)));
  });
  const close = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  };
  return { url: `http://127.0.0.1:${port}/${mode === 'http' ? 'mcp' : 'sse'}`, process: child, close, [Symbol.asyncDispose]: close };
}
