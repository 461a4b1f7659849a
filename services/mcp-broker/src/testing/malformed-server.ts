/**
 * A stdio "MCP server" written without the SDK that answers tools/call for `broken` with a result
 * that violates the protocol (content is not an array); `ok` answers properly. For tests of the
 * broker's handling of malformed responses. MCP_TEST_SPAWN_LOG as in echo-server.
 */
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

if (process.env.MCP_TEST_SPAWN_LOG) appendFileSync(process.env.MCP_TEST_SPAWN_LOG, `${process.pid}\n`);

type Msg = { id?: number | string; method?: string; params?: { name?: string; protocolVersion?: string } };

const send = (id: Msg['id'], body: Record<string, unknown>) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id, ...body })}\n`);

createInterface({ input: process.stdin }).on('line', (line) => {
  let msg: Msg;
  try {
    msg = JSON.parse(line) as Msg;
  } catch {
    return;
  }
  if (msg.id === undefined) return; // a notification
  switch (msg.method) {
    case 'initialize':
      return send(msg.id, {
        result: {
          protocolVersion: msg.params?.protocolVersion ?? '2025-06-18',
          capabilities: { tools: {} },
          serverInfo: { name: 'malformed', version: '1.0.0' },
        },
      });
    case 'tools/list':
      return send(msg.id, {
        result: {
          tools: [
            { name: 'broken', description: 'Answers garbage', inputSchema: { type: 'object' } },
            { name: 'ok', description: 'Answers properly', inputSchema: { type: 'object' } },
          ],
        },
      });
    case 'tools/call':
      return send(msg.id, { result: msg.params?.name === 'broken' ? { content: 'not a list' } : { content: [{ type: 'text', text: 'fine' }] } });
    case 'ping':
      return send(msg.id, { result: {} });
    default:
      return send(msg.id, { error: { code: -32601, message: `Method not found: ${msg.method}` } });
  }
});
