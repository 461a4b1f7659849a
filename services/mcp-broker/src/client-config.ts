import { z } from 'zod';

/**
 * The per-server settings of the MCP client features (mcp_servers.yaml): roots, sampling and
 * OAuth. Kept apart from config.ts's server entry, which only names them.
 */

/**
 * `roots:` — what the broker answers to `roots/list`. A connection is shared by every tenant and
 * run using the server (one per server per replica), so the answer cannot be a run's workspace:
 * it is this fixed list, empty by default (the operator names paths every user of the server may
 * see, never one tenant's).
 */
export const McpRootEntry = z
  .object({
    uri: z
      .string()
      .regex(/^file:\/\//, 'a root uri must start with file://')
      .describe('file:// URI of a directory the server may work in'),
    name: z.string().min(1).optional(),
  })
  .strict();
export type McpRootEntry = z.infer<typeof McpRootEntry>;

/**
 * `sampling:` — lets the server ask for a model completion (`sampling/createMessage`) during one of
 * its calls. Off unless set: the completion is paid from the operator's model slots. It runs on the
 * orchestrator executing the calling run (sampling.ts), on `slot` unless the server's model hints
 * name another slot.
 */
export const McpSamplingEntry = z
  .object({
    enabled: z.boolean().default(true),
    slot: z.enum(['base', 'reasoning', 'vision', 'code', 'chat']).default('base'),
    /** Cap on the completion's tokens, whatever the server asks for. */
    max_tokens: z.number().int().min(1).max(100_000).default(1024),
  })
  .strict();
export type McpSamplingEntry = z.infer<typeof McpSamplingEntry>;

const httpUrl = (what: string) =>
  z
    .string()
    .url()
    .refine((u) => /^https?:\/\//i.test(u), `${what} must be http(s)`);

/**
 * `oauth:` with the client credentials grant (the default `flow`) — the broker's own identity at
 * an HTTP (sse/http) server (oauth.ts, with the SDK's providers): the client authenticates with
 * `client_secret` (client_secret_basic) or with a JWT it signs with `private_key` (PEM,
 * private_key_jwt, `algorithm` e.g. ES256 or RS256). The token endpoint is discovered from the
 * server's protected-resource and authorization-server metadata; `issuer`, when set, is the only
 * authorization server the credentials are presented to. `${VAR}` is expanded in `client_id`,
 * `client_secret` and `private_key`.
 */
export const McpClientCredentialsEntry = z
  .object({
    flow: z.literal('client_credentials'),
    grant: z.literal('client_credentials').default('client_credentials'),
    client_id: z.string().min(1),
    client_secret: z.string().min(1).optional(),
    private_key: z.string().min(1).optional(),
    algorithm: z.string().min(1).default('RS256'),
    scope: z.string().min(1).optional(),
    issuer: httpUrl('issuer').optional(),
  })
  .strict()
  .refine((o) => (o.client_secret === undefined) !== (o.private_key === undefined), {
    message: 'give either client_secret or private_key',
    path: ['client_secret'],
  });
export type McpClientCredentialsEntry = z.infer<typeof McpClientCredentialsEntry>;

/**
 * `oauth: {flow: authorization_code}` — each tenant's user authorizes AgentLoop at the server's
 * authorization server (`POST /mcp/servers/{id}/authorize` at the gateway), and the tenant's calls
 * use the tenant's tokens (tenant-oauth.ts, stored per tenant by migration 0019). The client is
 * `client_id` (+ `client_secret`) when registered beforehand; otherwise `client_metadata_url`
 * (an https URL serving this client's metadata document, used when the authorization server
 * supports client ID metadata documents) or dynamic client registration. `scopes`: asked for when
 * neither the server's challenge nor its metadata names any. `redirect_uri` overrides the
 * gateway's callback (`PUBLIC_BASE_URL` + `/mcp/oauth/callback`).
 */
export const McpAuthorizationCodeEntry = z
  .object({
    flow: z.literal('authorization_code'),
    client_id: z.string().min(1).optional(),
    client_secret: z.string().min(1).optional(),
    client_metadata_url: httpUrl('client_metadata_url')
      .refine((u) => u.startsWith('https://') && new URL(u).pathname !== '/', 'client_metadata_url must be an https URL with a path')
      .optional(),
    client_name: z.string().min(1).default('AgentLoop'),
    scopes: z.array(z.string().min(1)).optional(),
    redirect_uri: httpUrl('redirect_uri').optional(),
  })
  .strict()
  .refine((o) => o.client_secret === undefined || o.client_id !== undefined, { message: 'client_secret needs client_id', path: ['client_secret'] });
export type McpAuthorizationCodeEntry = z.infer<typeof McpAuthorizationCodeEntry>;

/** `oauth:` — either flow; without `flow`, the client credentials grant (the only one before). */
export const McpOAuthEntry = z.preprocess(
  (v) => (v !== null && typeof v === 'object' && !('flow' in v) ? { ...v, flow: 'client_credentials' } : v),
  z.discriminatedUnion('flow', [McpClientCredentialsEntry, McpAuthorizationCodeEntry]),
);
export type McpOAuthEntry = z.infer<typeof McpOAuthEntry>;
