/**
 * The graph's state and the contracts its nodes share: what is checkpointed (`AgentState`), what a
 * node learns about its run (`RunContext`, never checkpointed) and what the wiring is given
 * (`AgentGraphDeps`).
 */
import { Annotation, MessagesAnnotation } from '@langchain/langgraph';
import type { BaseCheckpointSaver, BaseStore } from '@langchain/langgraph-checkpoint';
import type { Logger } from '@agentloop/core';
import type { JsonObject, Store } from '@agentloop/store';
import type { ModelSlot, ResolvedModel } from '../models/registry.js';
import type { ToolClient } from '../tool-client.js';
import type { SkillsClient } from '../skills-client.js';
import type { EnvironmentSettings } from '@agentloop/skills';
import type { PromptLanguage } from '../prompts.js';
import type { DelegationLimits } from '../delegation.js';
import type { TodoItem } from '../todos.js';
import type { ApprovalClient, ApprovalVerdict, HumanDecision } from '../approval-client.js';
import type { HistoryOptions } from '../history.js';
import { EMPTY_RUN_USAGE, runUsageReducer, threadUsageReducer, ZERO_USAGE, type RunUsage, type TokenUsage } from '../usage.js';
import { MAX_LOOPS_DEFAULT } from '../limits.js';
import type { StepLease } from '../step-gate.js';
import type { RunTokenAccounting } from '../budgets/token-accounting.js';
import type { RunTape } from '../recording/tape.js';
import type { ModelSuspension } from '../models/model-suspension.js';

/** A tool call's approval (seed 001 Part 7): the rules' verdict, then what was decided. */
export interface ApprovalEntry extends Omit<ApprovalVerdict, 'action'> {
  action: ApprovalVerdict['action'] | 'unavailable';
  tool: string;
  /** Set once decided: by a human (approved/rejected), by the rules (denied), or not obtainable. */
  decision?: HumanDecision | 'unavailable' | 'not_recorded';
  by?: string;
  comment?: string;
  /**
   * Arguments a human's `edit` decision gave the call (same tool): the tools node runs the call with
   * these instead of the model's, once the approval service has re-checked them.
   */
  edited_args?: Record<string, unknown>;
}

/** `type` of the interrupt value a tool approval raises. */
export const TOOL_APPROVAL_INTERRUPT = 'tool_approval';
/** `type` of the interrupt value ask_human raises. */
export const USER_INPUT_INTERRUPT = 'user_input_request';
/** `type` of the interrupt value an MCP server's request for the user's input raises (graph/elicitation.ts). */
export const MCP_ELICITATION_INTERRUPT = 'mcp_elicitation';

/** A tool call of the latest AI message that an MCP server asked the user's input for, and the answer once given. */
export interface ElicitationEntry {
  tool: string;
  server: string;
  message: string;
  mode: 'form' | 'url';
  requested_schema: unknown;
  url: string | null;
  /** The user's answer (the elicit node's resume value); the tools node retries the call with it. */
  answer?: { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> };
}

/** Why the finalize node was forced; null when the model finished by itself. */
export type FinalizeReason = 'loop_limit' | 'repeated_tool_call' | 'token_budget' | null;

const replace = <T>(def: () => T) => Annotation<T>({ reducer: (_a, b) => b, default: def });

/** Agent state (seed 000 §1.2). */
export const AgentState = Annotation.Root({
  ...MessagesAnnotation.spec,
  loops: replace<number>(() => 0),
  max_loops: replace<number>(() => MAX_LOOPS_DEFAULT),
  finalize_reason: replace<FinalizeReason>(() => null),
  context_id: replace<string | null>(() => null),
  parent_context: replace<string | null>(() => null),
  thread_id: replace<string | null>(() => null),
  user_id: replace<string | null>(() => null),
  /** Task list written by todo_write (seed 000 §2.7); replaced as a whole on each write. */
  todos: replace<TodoItem[]>(() => []),
  /** Tools the active skill allows (seed 000 §2.6 step 2); passed to the tool list request. */
  allowed_tools: replace<string[]>(() => []),
  /** The user's model slot preference (seed 001 §1.7); run config `model_pref` overrides it. */
  model_pref: replace<string | null>(() => null),
  /** Approval verdicts and decisions for the tool calls of the latest AI message, by tool call id. */
  approvals: replace<Record<string, ApprovalEntry>>(() => ({})),
  /** Tool calls of the latest AI message waiting for (or retried with) the user's input, by tool call id. */
  elicitations: replace<Record<string, ElicitationEntry>>(() => ({})),
  /** Tokens of every model call on this thread; updates are deltas. */
  token_usage: Annotation<TokenUsage>({ reducer: threadUsageReducer, default: () => ({ ...ZERO_USAGE }) }),
  /** Tokens and model calls of the current run; an update from a new run starts over. */
  run_usage: Annotation<RunUsage>({ reducer: runUsageReducer, default: () => ({ ...EMPTY_RUN_USAGE }) }),
});
export type AgentStateType = typeof AgentState.State;
export type AgentUpdate = typeof AgentState.Update;

/** Picks a model per call (seed 001 §1.7). Absent when the scripted provider pins the run's model. */
export interface ModelRouter {
  /** Slots the deployment configured. */
  configured: ReadonlySet<ModelSlot>;
  /** The model of a slot; falls back to base when the slot is not configured. */
  forSlot(slot: ModelSlot): ResolvedModel;
}

/** What a node needs to know about the run it is part of; looked up by run id, never checkpointed. */
export interface RunContext {
  runId: string;
  tenantId: string;
  threadId: string;
  /** The run's model: used for every call when `router` is absent (the scripted provider). */
  model: ResolvedModel;
  router?: ModelRouter;
  /** Preference from the run config (`configurable.model_pref`, or a slot given as `configurable.model`). */
  modelPref?: ModelSlot | null;
  logger: Logger;
  signal: AbortSignal;
  /** 0 for a run started by a client, 1 for its delegated agents, 2 for theirs... */
  depth?: number;
  /** Thread whose workspace tool calls use: the parent's for a delegated agent. Default: `threadId`. */
  workspaceThreadId?: string;
  /** A stateless run: its thread is deleted when it ends, so it cannot be resumed (no ask_human). */
  ephemeral?: boolean;
  /** The run's `config` as submitted: delegated agents inherit it (see `childConfig`). */
  runConfig?: JsonObject;
  /** Its environment's models, agents, system prompt and tools (seed 002), read when the execution started; null: none. */
  environment?: EnvironmentSettings | null;
  /**
   * The API key id of the request that started this job (RunJob.api_key_id; "" without API keys):
   * for a resume, who really answered an approval, recorded in the audit trail beside the
   * client's own `by` label.
   */
  apiKeyId?: string;
  /** The run's slot of the worker's CPU gate (step-gate.ts): model calls are made without holding it. */
  stepLease?: Pick<StepLease, 'idle'>;
  /**
   * Present when the run may suspend while its model thinks (models/model-suspension.ts): the agent
   * step's model call then goes through it. Absent: the step waits for the model inside the graph.
   */
  suspension?: Pick<ModelSuspension, 'call'>;
  /** Long-term memory (issue 12): the run's tenant-bound store and its user (memory tools); absent: no memory tools. */
  memory?: RunMemory;
  /** Token budgets and the usage ledger (issue 17); absent: calls are neither checked nor recorded. */
  tokens?: RunTokenAccounting;
  /** Record and replay (issue 17): the run's model calls and bus tool calls go through it; absent: neither. */
  tape?: RunTape;
}

/** What the memory tools need of a run. */
export interface RunMemory {
  store: BaseStore;
  /** The run's user id (run config, else thread metadata), looked up on first use; null when there is none. */
  userId(): Promise<string | null>;
}

export interface AgentGraphDeps {
  tools: Pick<ToolClient, 'listTools' | 'execute'> & Partial<Pick<ToolClient, 'isIdempotent' | 'recordedOutcome' | 'reexecute' | 'inspectPath' | 'providerOf'>>;
  /** Effect ledger: when given, every bus call of a side-effecting (non-idempotent) tool is recorded by (run, tool call id) and never re-executed on resume; idempotent tools skip it. */
  ledger?: Pick<Store, 'claimToolEffect' | 'restartToolEffect' | 'completeToolEffect'>;
  /** Resolves the context of the run a node executes for. */
  runContext: (runId: string) => RunContext | undefined;
  checkpointer: BaseCheckpointSaver;
  systemPrompt?: string;
  /** Language of prompts, reminders and orchestrator messages (`PROMPT_LANGUAGE`). Default en. */
  language?: PromptLanguage;
  /** What is sent to the model of the history (`MAX_MESSAGE_HISTORY`, `MESSAGE_HISTORY_STRATEGY`). Default 40, clean. */
  history?: Partial<HistoryOptions>;
  /** Compact automatically when the next model input is estimated above this many tokens; 0 or absent = never. */
  compactTokenBudget?: number;
  /** Agent names an @mention may address (`AGENT_NAMES`). Default ["general"]. */
  agentNames?: readonly string[];
  /** Skills an @mention may address (from the skill sandbox), and loading one into the workspace. */
  skills?: Pick<SkillsClient, 'catalog' | 'load'>;
  /**
   * Delegated agents (seed 001 Part 5): when given, delegate_task calls go to the `delegate` node, which
   * suspends the graph with an interrupt until the children answer. Absent: delegate_task answers "not available".
   */
  delegation?: DelegationLimits;
  /**
   * Tool approval (seed 001 Part 7): every bus tool call is checked first; a call that needs a
   * human suspends the run until it is approved or rejected. Absent: no checks (APPROVAL_MODE=off).
   */
  approvals?: Pick<ApprovalClient, 'check' | 'record'>;
}
