import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { McpServerEntry } from './config.js';
import type { CallToolResultLike } from './format.js';
import { serverPrefix, type CatalogTool, type McpTool } from './naming.js';

/** The built-in tools offered for a server that announces the MCP resources capability. */
export type ResourceToolKind = 'list_resources' | 'read_resource';

const DEFINITIONS: Record<ResourceToolKind, McpTool> = {
  list_resources: {
    name: 'list_resources',
    title: 'List resources',
    description: 'Lists the resources this MCP server offers (uri, name, type). Pass `cursor` from a previous answer for the next page.',
    inputSchema: { type: 'object', properties: { cursor: { type: 'string', description: 'nextCursor of the previous page' } } },
    annotations: { readOnlyHint: true, idempotentHint: true },
  },
  read_resource: {
    name: 'read_resource',
    title: 'Read a resource',
    description:
      'Reads one resource of this MCP server by its uri (as listed, or named in a tool result). Text comes back as text; binary content is saved to outputs/mcp/.',
    inputSchema: { type: 'object', properties: { uri: { type: 'string', description: 'the resource uri' } }, required: ['uri'] },
    annotations: { readOnlyHint: true, idempotentHint: true },
  },
};

/** Exposed name of a server's built-in resource tool (`<server>_read_resource`). */
export function resourceToolName(server: string, kind: ResourceToolKind): string {
  return `${serverPrefix(server)}${kind}`;
}

/**
 * The built-in resource tools of a server (offered to a run whenever its other tools are: with
 * the server when it is always available or @mentioned, or when any of its tools is always
 * available, since their results may link resources). Left out when the server has a tool of its
 * own under the same name.
 */
export function resourceTools(server: string, entry: McpServerEntry, taken: { has(name: string): boolean }): CatalogTool[] {
  const always = entry.always_available || Object.values(entry.tools).some((t) => t.enabled && t.always_available);
  return (Object.keys(DEFINITIONS) as ResourceToolKind[])
    .map((kind) => ({ kind, name: resourceToolName(server, kind) }))
    .filter(({ name }) => !taken.has(name))
    .map(({ kind, name }) => ({ name, server, tool: DEFINITIONS[kind], config: undefined, alwaysAvailable: always, idempotent: true, builtin: kind }));
}

/** Thrown for arguments the built-in tool cannot use; worded for the model. */
export function resourceArgsProblem(kind: ResourceToolKind, args: Record<string, unknown>): string | undefined {
  if (kind === 'read_resource' && (typeof args.uri !== 'string' || args.uri === '')) return '`uri` must be a non-empty string';
  if (args.cursor !== undefined && typeof args.cursor !== 'string') return '`cursor` must be a string';
  return undefined;
}

/**
 * The request a built-in resource tool makes, answering in the shape of a CallToolResult so the
 * same formatting (text capped, blobs saved to outputs/mcp/) applies.
 */
export function resourceRequest(
  kind: ResourceToolKind,
  args: Record<string, unknown>,
): (client: Client, options: RequestOptions) => Promise<CallToolResultLike> {
  switch (kind) {
    case 'list_resources':
      return async (client, options) => {
        const res = await client.listResources(typeof args.cursor === 'string' ? { cursor: args.cursor } : undefined, options);
        const lines = res.resources.map((r) => `${r.uri} (${[r.name, r.mimeType].filter(Boolean).join(', ')})${r.description ? ` — ${r.description}` : ''}`);
        if (res.nextCursor) lines.push(`[more: call again with cursor "${res.nextCursor}"]`);
        return { content: [{ type: 'text', text: lines.length > 0 ? lines.join('\n') : '(no resources)' }] };
      };
    case 'read_resource':
      return async (client, options) => {
        const res = await client.readResource({ uri: args.uri as string }, options);
        return { content: res.contents.map((resource) => ({ type: 'resource', resource })) };
      };
  }
}
