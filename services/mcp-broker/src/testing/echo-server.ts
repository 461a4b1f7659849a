/**
 * A small MCP server for tests (stdio by default; `--http <port>` for streamable HTTP):
 * echo, add, fail (isError), crash (exits mid-call), slow (sleeps), env (reports its environment).
 */
import http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

function build(): McpServer {
  const server = new McpServer({ name: 'echo', version: '1.0.0' });
  server.registerTool('echo', { description: 'Echo the text', inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  server.registerTool('add', { description: 'Add two numbers', inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }));
  server.registerTool('fail', { description: 'Always fails' }, async () => ({ content: [{ type: 'text', text: 'it broke' }], isError: true }));
  server.registerTool('crash', { description: 'Exits the process' }, async () => process.exit(3));
  server.registerTool('slow', { description: 'Sleeps', inputSchema: { ms: z.number() } }, async ({ ms }) => {
    await new Promise((r) => setTimeout(r, ms));
    return { content: [{ type: 'text', text: 'late' }] };
  });
  server.registerTool('env', { description: 'Environment' }, async () => ({ content: [{ type: 'text', text: JSON.stringify(process.env) }] }));
  return server;
}

const httpIdx = process.argv.indexOf('--http');
if (httpIdx > 0) {
  const port = Number(process.argv[httpIdx + 1]);
  http
    .createServer(async (req, res) => {
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      const server = build();
      res.on('close', () => void transport.close());
      await server.connect(transport);
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => void transport.handleRequest(req, res, body ? JSON.parse(body) : undefined));
    })
    .listen(port, '127.0.0.1', () => process.stdout.write(`listening ${port}\n`));
} else {
  await build().connect(new StdioServerTransport());
}
