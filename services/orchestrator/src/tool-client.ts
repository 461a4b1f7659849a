import { create, fromBinary, toBinary, ExecuteToolRequestSchema, ExecuteToolResponseSchema, ListToolsRequestSchema, ListToolsResponseSchema, WorkspaceRequestSchema, WorkspaceRequest_Action, WorkspaceResponseSchema, type ToolSpec } from '@agentloop/proto';
import { Headers, type Bus } from '@agentloop/bus';
import { TimeoutError, UnavailableError, errorMessage } from '@agentloop/core';

export const TOOL_SUBJECTS = {
  list: 'agentloop.tools.list',
  execute: 'agentloop.tools.execute',
  workspace: 'agentloop.tools.workspace',
} as const;

export interface ToolCallInput {
  tenantId: string;
  threadId: string;
  runId: string;
  toolCallId: string;
  name: string;
  args: Record<string, unknown>;
}

export interface ToolCallResult {
  content: string;
  isError: boolean;
  errorCode?: string;
}

/**
 * The orchestrator's side of the tool-runner contract. A tool failure, a
 * timeout or an absent tool-runner all become a result whose content starts
 * with "Error:" — the loop goes on and the model decides (seed 000 §4.3.1).
 */
export class ToolClient {
  private cached: { at: number; tools: ToolSpec[]; tenant: string } | undefined;

  constructor(
    private readonly bus: Bus,
    private readonly opts: { callTimeoutMs: number; listTimeoutMs?: number; listCacheMs?: number },
  ) {}

  async listTools(tenantId: string): Promise<ToolSpec[]> {
    const now = Date.now();
    if (this.cached && this.cached.tenant === tenantId && now - this.cached.at < (this.opts.listCacheMs ?? 5_000)) return this.cached.tools;
    const reply = await this.bus.request(
      TOOL_SUBJECTS.list,
      toBinary(ListToolsRequestSchema, create(ListToolsRequestSchema, { tenantId })),
      { timeoutMs: this.opts.listTimeoutMs ?? 5_000, headers: { [Headers.tenant]: tenantId } },
    );
    const tools = fromBinary(ListToolsResponseSchema, reply.data).tools;
    this.cached = { at: now, tools, tenant: tenantId };
    return tools;
  }

  async ensureWorkspace(tenantId: string, threadId: string, timeoutMs = 10_000): Promise<void> {
    const req = create(WorkspaceRequestSchema, { tenantId, threadId, action: WorkspaceRequest_Action.ENSURE });
    const reply = await this.bus.request(TOOL_SUBJECTS.workspace, toBinary(WorkspaceRequestSchema, req), { timeoutMs, headers: { [Headers.tenant]: tenantId } });
    const res = fromBinary(WorkspaceResponseSchema, reply.data);
    if (res.error) throw new Error(`Workspace for thread ${threadId} could not be prepared: ${res.error.message}`);
  }

  async deleteWorkspace(tenantId: string, threadId: string, timeoutMs = 10_000): Promise<void> {
    const req = create(WorkspaceRequestSchema, { tenantId, threadId, action: WorkspaceRequest_Action.DELETE });
    await this.bus.request(TOOL_SUBJECTS.workspace, toBinary(WorkspaceRequestSchema, req), { timeoutMs, headers: { [Headers.tenant]: tenantId } });
  }

  async execute(call: ToolCallInput, traceparent?: string): Promise<ToolCallResult> {
    const req = create(ExecuteToolRequestSchema, {
      tenantId: call.tenantId,
      threadId: call.threadId,
      runId: call.runId,
      toolCallId: call.toolCallId,
      toolName: call.name,
      argsJson: JSON.stringify(call.args ?? {}),
    });
    const headers: Record<string, string> = {
      [Headers.tenant]: call.tenantId,
      [Headers.idempotencyKey]: `${call.runId}:${call.toolCallId}`,
    };
    if (traceparent) headers[Headers.traceparent] = traceparent;
    try {
      const reply = await this.bus.request(TOOL_SUBJECTS.execute, toBinary(ExecuteToolRequestSchema, req), {
        timeoutMs: this.opts.callTimeoutMs,
        headers,
      });
      const res = fromBinary(ExecuteToolResponseSchema, reply.data);
      if (res.error) {
        const content = res.content.startsWith('Error:') ? res.content : `Error: ${res.error.message}`;
        return { content, isError: true, errorCode: res.error.code };
      }
      return { content: res.content, isError: false };
    } catch (err) {
      if (err instanceof TimeoutError) {
        return {
          content: `Error: Tool ${call.name} did not answer within ${this.opts.callTimeoutMs} ms (the tool-runner may have crashed or be overloaded). Its effect, if any, is unknown.`,
          isError: true,
          errorCode: 'TIMEOUT',
        };
      }
      if (err instanceof UnavailableError) {
        return { content: `Error: No tool-runner is available to run ${call.name}; try again later.`, isError: true, errorCode: 'UNAVAILABLE' };
      }
      return { content: `Error: Tool ${call.name} failed: ${errorMessage(err)}`, isError: true, errorCode: 'INTERNAL' };
    }
  }
}
