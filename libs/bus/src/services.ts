/**
 * The bus contract of every service, declared once: subject, default deadline and error channel of
 * each RPC of the proto `service` definitions (proto/agentloop/v1/*.proto). Servers
 * (`serveService`) and callers (`serviceClient`) both derive from these; no service declares
 * another's subjects. The subject strings are the ones on the wire since the first release, so
 * mixed deployments keep working.
 */
import { Approval, Indexer, McpOAuth, SkillSandbox, ToolRunner, type WireError } from '@agentloop/proto';
import { defineService, registerDefaultBinding, type MethodSpec, type ServiceShape } from './service-rpc.js';

type ToolRunnerMethods = ServiceShape<typeof ToolRunner>;

/** A failed tool call is a result like any other: "Error: <message>" content, plus `error`. */
const toolFailure = (e: WireError) => ({ content: `Error: ${e.message}` });

/** ListTools and ExecuteTool: the tool protocol every tool provider speaks (tool-runner, skill sandbox, MCP broker). */
const TOOL_PROTOCOL = {
  listTools: { name: 'list', timeoutMs: 5_000 },
  executeTool: { name: 'execute', timeoutMs: 60_000, errors: 'field', failure: toolFailure },
} satisfies { [K in 'listTools' | 'executeTool']: MethodSpec<ToolRunnerMethods, K> };

/** `agentloop.tools.*`: tools and workspaces (queue group `tool-runner`). */
export const TOOL_RUNNER_RPC = registerDefaultBinding(
  defineService(ToolRunner, {
    label: 'tool-runner',
    queue: 'tool-runner',
    prefix: 'agentloop.tools',
    methods: {
      ...TOOL_PROTOCOL,
      workspace: { name: 'workspace', timeoutMs: 10_000, errors: 'field' },
      reloadTools: { name: 'reload', timeoutMs: 10_000 },
    },
  }),
);

/** `agentloop.skills.tools.*`: the skill sandbox as a tool provider (`skill`, `run_skill_script`). */
export const SKILL_TOOLS_RPC = defineService<ToolRunnerMethods, 'listTools' | 'executeTool'>(ToolRunner, {
  label: 'skill sandbox',
  queue: 'skill-sandbox',
  prefix: 'agentloop.skills.tools',
  methods: TOOL_PROTOCOL,
});

/** `agentloop.mcp.tools.*`: the MCP broker as a tool provider. */
export const MCP_TOOLS_RPC = defineService<ToolRunnerMethods, 'listTools' | 'executeTool'>(ToolRunner, {
  label: 'MCP broker',
  queue: 'mcp-broker',
  prefix: 'agentloop.mcp.tools',
  methods: TOOL_PROTOCOL,
});

/** `agentloop.approval.*`: verdicts and the audit trail (queue group `approval`). Failures are in `error`. */
export const APPROVAL_RPC = registerDefaultBinding(
  defineService(Approval, {
    label: 'approval service',
    queue: 'approval',
    prefix: 'agentloop.approval',
    // A store failure: the request was valid and may succeed later.
    internalRetryable: true,
    methods: {
      // A verdict has no side effect, and recording is deduplicated per (run, tool call): both safe to resend.
      check: { name: 'check', timeoutMs: 5_000, errors: 'field', idempotent: true },
      record: { name: 'record', timeoutMs: 5_000, errors: 'field', idempotent: true },
      listAudit: { name: 'audit', timeoutMs: 10_000, errors: 'field' },
      verifyAudit: { name: 'verify', timeoutMs: 10_000, errors: 'field' },
    },
  }),
);

/** `agentloop.skills.*`: the skill registry and loading (queue group `skill-sandbox`). */
export const SKILL_SANDBOX_RPC = registerDefaultBinding(
  defineService(SkillSandbox, {
    label: 'skill sandbox',
    queue: 'skill-sandbox',
    prefix: 'agentloop.skills',
    methods: {
      listSkills: { name: 'list', timeoutMs: 3_000, errors: 'field' },
      loadSkill: { name: 'load', timeoutMs: 10_000, errors: 'field' },
      reloadSkills: { name: 'reload', timeoutMs: 10_000 },
    },
  }),
);

/** `agentloop.indexer.*`: document extraction and search (queue group `indexer`). Failures are in `error`. */
export const INDEXER_RPC = registerDefaultBinding(
  defineService(Indexer, {
    label: 'indexer',
    queue: 'indexer',
    prefix: 'agentloop.indexer',
    methods: {
      readDocument: { name: 'read', timeoutMs: 60_000, errors: 'field' },
      searchDocument: { name: 'search', timeoutMs: 60_000, errors: 'field' },
    },
  }),
);

/**
 * `agentloop.mcp.oauth.*`: the MCP broker's authorization code flow (queue group `mcp-broker`):
 * starting it for a tenant and server, finishing it from the gateway's callback, listing and
 * revoking a tenant's authorizations. Failures are in `error` where the response has one.
 */
export const MCP_OAUTH_RPC = registerDefaultBinding(
  defineService(McpOAuth, {
    label: 'MCP broker',
    queue: 'mcp-broker',
    prefix: 'agentloop.mcp.oauth',
    methods: {
      authorize: { name: 'authorize', timeoutMs: 15_000, errors: 'field' },
      callback: { name: 'callback', timeoutMs: 15_000, errors: 'field' },
      status: { name: 'status', timeoutMs: 5_000 },
      revoke: { name: 'revoke', timeoutMs: 5_000 },
    },
  }),
);
