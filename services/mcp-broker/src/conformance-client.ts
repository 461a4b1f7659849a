/**
 * The MCP conformance suite's client under test (`@modelcontextprotocol/conformance client
 * --command …`, scripts/mcp-conformance.sh): AgentLoop's MCP client — the broker's pool, with the
 * capabilities and OAuth it declares in production — pointed at the scenario's server.
 *
 *   node conformance-client.js <server-url>
 *
 * MCP_CONFORMANCE_SCENARIO names the scenario; MCP_CONFORMANCE_CONTEXT (JSON) carries its client
 * credentials when it has some. It connects (initialize, tools/list), calls `add_numbers` when
 * offered (else the first tool, without arguments), and exits 0 on success, 1 on a failure. A
 * harness has no user: a server's elicitation is accepted with the requested schema's defaults.
 */
import { createLogger, errorMessage } from '@agentloop/core';
import { parseMcpFile } from './config.js';
import { acceptDefaults } from './elicitation.js';
import { McpPool } from './pool.js';

const url = process.argv.at(-1);
if (!url || !/^https?:\/\//.test(url)) {
  process.stderr.write('usage: conformance-client <server-url>\n');
  process.exit(2);
}
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as {
  client_id?: string;
  client_secret?: string;
  private_key_pem?: string;
  signing_algorithm?: string;
};
const oauth = !context.client_id
  ? undefined
  : context.client_secret
    ? { client_id: context.client_id, client_secret: context.client_secret }
    : context.private_key_pem
      ? { client_id: context.client_id, private_key: context.private_key_pem, algorithm: context.signing_algorithm ?? 'ES256' }
      : undefined;
const file = parseMcpFile(JSON.stringify({ servers: { conformance: { connection_mode: 'http', url, ...(oauth ? { oauth } : {}) } } }));
const logger = createLogger({ service: 'mcp-conformance-client', level: process.env.LOG_LEVEL ?? 'warn' });
const pool = new McpPool(file.servers, { logger, startTimeoutMs: 20_000 });

try {
  const tools = await pool.tools('conformance');
  const tool = tools.find((t) => t.name === 'add_numbers') ?? tools[0];
  if (tool) {
    const args = tool.name === 'add_numbers' ? { a: 5, b: 3 } : {};
    const caller = { tenantId: 'conformance', runId: 'conformance', toolCallId: 'call-1', toolName: tool.name, elicit: acceptDefaults };
    const result = await pool.callTool('conformance', tool.name, args, { exposedName: tool.name, timeoutMs: 20_000, caller });
    process.stdout.write(`${JSON.stringify(result)}\n`);
  }
  await pool.closeAll();
  process.exit(0);
} catch (err) {
  process.stderr.write(`${process.env.MCP_CONFORMANCE_SCENARIO ?? 'scenario'}: ${errorMessage(err)}\n`);
  await pool.closeAll();
  process.exit(1);
}
