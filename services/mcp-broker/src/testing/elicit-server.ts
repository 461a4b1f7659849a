/**
 * A small real MCP server (stdio) whose tools ask the user for input mid-call (`elicitation/create`),
 * for the broker's elicitation tests. Each tool answers with the elicitation's result as JSON text
 * (`answer: {...}`), so a test sees exactly what the server received.
 *
 * Tools: book_table (idempotentHint: a form with a required `name` and `seats` defaulting to 2),
 * place_order (not idempotent: the same form), open_page (idempotentHint: url mode).
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ElicitResultSchema, type ElicitRequest, type ElicitRequestFormParams } from '@modelcontextprotocol/sdk/types.js';

const BOOKING_FORM: ElicitRequestFormParams['requestedSchema'] = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'Name for the booking' },
    seats: { type: 'integer', minimum: 1, maximum: 12, default: 2 },
  },
  required: ['name'],
};

const server = new McpServer({ name: 'elicit', version: '1.0.0' });
const ask = (params: ElicitRequest['params']) => server.server.request({ method: 'elicitation/create', params }, ElicitResultSchema);
const answered = (result: unknown) => ({ content: [{ type: 'text' as const, text: `answer: ${JSON.stringify(result)}` }] });

server.registerTool('book_table', { description: 'Books a table, asking who for', annotations: { idempotentHint: true } }, async () =>
  answered(await ask({ message: 'Who is the table for?', requestedSchema: BOOKING_FORM })),
);
server.registerTool('place_order', { description: 'Places an order, asking who for' }, async () =>
  answered(await ask({ message: 'Who is the order for?', requestedSchema: BOOKING_FORM })),
);
server.registerTool('open_page', { description: 'Asks the user to open a page', annotations: { idempotentHint: true } }, async () =>
  answered(await ask({ mode: 'url', message: 'Sign in to continue', url: 'https://example.com/sign-in', elicitationId: 'sign-in-1' })),
);

await server.connect(new StdioServerTransport());
