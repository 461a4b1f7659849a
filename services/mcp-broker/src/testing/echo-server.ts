/**
 * A small real MCP server for tests, built with the SDK's McpServer.
 *
 *   node echo-server.js                 stdio
 *   node echo-server.js --http <port>   streamable HTTP on 127.0.0.1 (stateless; port 0: any), prints "listening <port>"
 *   node echo-server.js --sse <port>    legacy HTTP+SSE on 127.0.0.1 (GET /sse, POST /messages)
 *
 * Environment: MCP_TEST_SPAWN_LOG (append this process id to the file at start: counts spawns),
 * MCP_TEST_FAIL_START (write a reason to stderr and exit 2), MCP_TEST_START_DELAY_MS (stdio: wait before
 * answering anything), MCP_TEST_TOKEN (http/sse: require
 * `Authorization: Bearer <token>`).
 *
 * Tools: echo, add, fail (isError), crash (exits mid-call), slow (sleeps), freeze (blocks its event
 * loop for good), env (its environment), picture (image + resources), sum (structuredContent only),
 * big (long text), read.file (a name that needs sanitizing), grow (adds a tool `grown`: tools/list_changed).
 */
import { appendFileSync } from 'node:fs';
import http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

if (process.env.MCP_TEST_SPAWN_LOG) appendFileSync(process.env.MCP_TEST_SPAWN_LOG, `${process.pid}\n`);
if (process.env.MCP_TEST_FAIL_START) {
  process.stderr.write('echo-server: refusing to start: MCP_TEST_FAIL_START is set\n');
  process.exit(2);
}

const PNG_1x1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

function build(): McpServer {
  const server = new McpServer({ name: 'echo', version: '1.0.0' });
  server.registerTool('echo', { description: 'Echo the text', inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } }, async ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  server.registerTool('add', { description: 'Add two numbers', inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({
    content: [{ type: 'text', text: String(a + b) }],
  }));
  server.registerTool('fail', { description: 'Always fails' }, async () => ({ content: [{ type: 'text', text: 'it broke' }], isError: true }));
  server.registerTool('crash', { description: 'Exits the process mid-call' }, async () => {
    process.stderr.write('echo-server: crashing on purpose\n');
    process.exit(3);
  });
  server.registerTool('slow', { description: 'Sleeps, then answers', inputSchema: { ms: z.number() } }, async ({ ms }) => {
    await new Promise((r) => setTimeout(r, ms));
    return { content: [{ type: 'text', text: 'late' }] };
  });
  server.registerTool('freeze', { description: 'Blocks the server for good' }, async () => {
    for (;;) {
      // A hung server: not even a ping gets through.
    }
  });
  server.registerTool('env', { description: 'The environment of the server process' }, async () => ({
    content: [{ type: 'text', text: JSON.stringify(process.env) }],
  }));
  server.registerTool('picture', { description: 'An image and two resources', annotations: { idempotentHint: true } }, async () => ({
    content: [
      { type: 'text', text: 'here you go' },
      { type: 'image', data: PNG_1x1, mimeType: 'image/png' },
      { type: 'resource_link', uri: 'file:///srv/report.pdf', name: 'report.pdf' },
      { type: 'resource', resource: { uri: 'file:///srv/notes.txt', mimeType: 'text/plain', text: 'the notes' } },
    ],
  }));
  server.registerTool(
    'sum',
    { description: 'Structured result only', inputSchema: { values: z.array(z.number()) }, outputSchema: { sum: z.number() } },
    async ({ values }) => ({
      content: [],
      structuredContent: { sum: values.reduce((a, b) => a + b, 0) },
    }),
  );
  server.registerTool('big', { description: 'A long text', inputSchema: { bytes: z.number() } }, async ({ bytes }) => ({
    content: [{ type: 'text', text: 'x'.repeat(bytes) }],
  }));
  server.registerTool('read.file', { description: 'A name with a dot' }, async () => ({ content: [{ type: 'text', text: 'dotted' }] }));
  // Adding a tool at runtime makes the SDK send notifications/tools/list_changed.
  server.registerTool('grow', { description: 'Adds the tool `grown`' }, async () => {
    server.registerTool('grown', { description: 'Added at runtime' }, async () => ({ content: [{ type: 'text', text: 'grown' }] }));
    return { content: [{ type: 'text', text: 'added' }] };
  });
  return server;
}

function authorized(req: http.IncomingMessage, res: http.ServerResponse): boolean {
  const token = process.env.MCP_TEST_TOKEN;
  if (!token || req.headers.authorization === `Bearer ${token}`) return true;
  res.writeHead(401, { 'content-type': 'text/plain' }).end('missing or wrong bearer token');
  return false;
}

function readJson(req: http.IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      try {
        resolve(body ? JSON.parse(body) : undefined);
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
    req.on('error', reject);
  });
}

function listen(server: http.Server, port: number): void {
  server.listen(port, '127.0.0.1', () => {
    const addr = server.address();
    process.stdout.write(`listening ${typeof addr === 'object' && addr ? addr.port : port}\n`);
  });
}

const mode = process.argv.includes('--http') ? 'http' : process.argv.includes('--sse') ? 'sse' : 'stdio';
const port = Number(process.argv[process.argv.indexOf(`--${mode}`) + 1] ?? 0);

if (mode === 'http') {
  listen(
    http.createServer((req, res) => {
      if (!authorized(req, res)) return;
      // Stateless: a fresh server and transport per request.
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      const server = build();
      res.on('close', () => void transport.close());
      void (async () => {
        await server.connect(transport);
        const body = req.method === 'POST' ? await readJson(req) : undefined;
        await transport.handleRequest(req, res, body);
      })().catch(() => res.headersSent || res.writeHead(400).end());
    }),
    port,
  );
} else if (mode === 'sse') {
  const sessions = new Map<string, SSEServerTransport>();
  listen(
    http.createServer((req, res) => {
      if (!authorized(req, res)) return;
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      void (async () => {
        if (req.method === 'GET' && url.pathname === '/sse') {
          const transport = new SSEServerTransport('/messages', res);
          sessions.set(transport.sessionId, transport);
          res.on('close', () => sessions.delete(transport.sessionId));
          await build().connect(transport);
        } else if (req.method === 'POST' && url.pathname === '/messages') {
          const transport = sessions.get(url.searchParams.get('sessionId') ?? '');
          if (!transport) res.writeHead(404).end('unknown session');
          else await transport.handlePostMessage(req, res);
        } else {
          res.writeHead(404).end();
        }
      })().catch(() => res.headersSent || res.writeHead(400).end());
    }),
    port,
  );
} else {
  const delay = Number(process.env.MCP_TEST_START_DELAY_MS ?? 0);
  if (delay > 0) await new Promise((r) => setTimeout(r, delay));
  await build().connect(new StdioServerTransport());
}
