/**
 * The ToolClient with the scheduled-task tools (scheduled-tasks.ts) added: they are listed with the
 * bus tools and called like them, so the approval rules, the effect ledger and the tool metrics
 * apply to them unchanged; only their execution stays in the orchestrator.
 */
import type { Bus, ToolProgress } from '@agentloop/bus';
import type { ToolSpec } from '@agentloop/proto';
import { isScheduledTaskTool, SCHEDULED_TASK_SPECS, type ScheduledTasks } from './scheduled-tasks.js';
import { ToolClient, type ToolCallInput, type ToolCallResult, type ToolVisibility } from './tool-client.js';

export class TaskToolClient extends ToolClient {
  constructor(
    bus: Bus,
    opts: ConstructorParameters<typeof ToolClient>[1],
    private readonly tasks: ScheduledTasks,
  ) {
    super(bus, opts);
  }

  override async listTools(tenantId: string, visibility: ToolVisibility = {}): Promise<ToolSpec[]> {
    const listed = await super.listTools(tenantId, visibility);
    // A delegated agent works on its parent's task, in a thread of its own: it schedules nothing.
    if (visibility.subagent) return listed;
    return [...listed, ...SCHEDULED_TASK_SPECS.filter((s) => !listed.some((t) => t.name === s.name))];
  }

  override isIdempotent(name: string): boolean {
    return name === 'list_tasks' || super.isIdempotent(name);
  }

  override async recordedOutcome(call: ToolCallInput): Promise<ToolCallResult | 'not-executed' | undefined> {
    // No replay log of ours: a task call cut short by a crash is reported as interrupted, not run twice.
    if (isScheduledTaskTool(call.name)) return undefined;
    return super.recordedOutcome(call);
  }

  override reexecute(call: ToolCallInput): Promise<ToolCallResult> {
    return isScheduledTaskTool(call.name) ? this.tasks.execute(call) : super.reexecute(call);
  }

  override execute(
    call: ToolCallInput,
    traceparent?: string,
    extraHeaders: Record<string, string> = {},
    onProgress?: (p: ToolProgress) => void,
  ): Promise<ToolCallResult> {
    return isScheduledTaskTool(call.name) ? this.tasks.execute(call) : super.execute(call, traceparent, extraHeaders, onProgress);
  }
}
