/**
 * The MCP client features the broker declares on each connection (beside tools): `roots` (the
 * server's configured list, client-config.ts) and, for servers with `sampling:` set, `sampling`
 * (relayed to the orchestrator running the calling run, sampling-relay.ts). Elicitation is not
 * declared: see docs/mcp-client-features.md.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateMessageRequestSchema, ErrorCode, ListRootsRequestSchema, McpError, type ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerEntry } from './config.js';
import type { SamplingParams, SamplingResult } from './sampling-relay.js';

/** The run and tool call a call to a server was made for. */
export interface McpCaller {
  tenantId: string;
  runId: string;
  toolCallId: string;
  /** The tool's name as offered to the model. */
  toolName: string;
}

/** Answers a server's sampling request on behalf of `caller`'s run. */
export type Sampler = (server: string, caller: McpCaller, params: SamplingParams) => Promise<SamplingResult>;

export function clientCapabilities(entry: Pick<McpServerEntry, 'sampling'>, sampler: Sampler | undefined): ClientCapabilities {
  return { roots: {}, ...(entry.sampling?.enabled && sampler ? { sampling: {} } : {}) };
}

/**
 * Registers the handlers of the declared features. `callers()` gives the callers of the calls in
 * flight on this connection: a request from the server is attributed to the only one — the call
 * lane makes that the rule for tools that are not read-only — and refused when several calls (or
 * none) are in flight, since a shared connection does not tell which call a request belongs to.
 */
export function installClientFeatures(
  client: Client,
  server: string,
  entry: Pick<McpServerEntry, 'roots' | 'sampling'>,
  callers: () => readonly McpCaller[],
  sampler: Sampler | undefined,
): void {
  client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: entry.roots.map((r) => ({ uri: r.uri, ...(r.name ? { name: r.name } : {}) })) }));
  if (!entry.sampling?.enabled || !sampler) return;
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    const inFlight = callers();
    if (inFlight.length !== 1) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        inFlight.length === 0
          ? 'Sampling is answered only during a tool call (no call to this server is in flight)'
          : `Sampling is answered only when one call to this server is in flight (${inFlight.length} are): the request cannot be attributed to a run`,
      );
    }
    try {
      return await sampler(server, inFlight[0]!, request.params);
    } catch (err) {
      throw new McpError(ErrorCode.InternalError, `Sampling failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
}
