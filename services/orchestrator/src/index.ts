export { createOrchestrator, type Orchestrator, type OrchestratorDeps } from './service.js';
export { loadOrchestratorConfig, OrchestratorEnv, RUN_CONCURRENCY_DEFAULT, type OrchestratorConfig } from './config.js';
export { StepGate, StepLease } from './step-gate.js';
export { ModelRegistry, slotsFromEnv, MODEL_SLOTS, type ModelSlot, type SlotConfig, type ResolvedModel } from './models/registry.js';
export { ScriptedChatModel, ScriptedTurn, ScriptedModelSpec, type ScriptedCallOptions } from './models/scripted.js';
export {
  buildAgentGraph,
  detectRepeatedToolCall,
  AgentState,
  MAX_LOOPS_DEFAULT,
  MAX_LOOPS_MIN,
  MAX_LOOPS_MAX,
  type AgentGraph,
  type AgentGraphDeps,
  type ModelRouter,
  type RunContext,
} from './graph.js';
export { RunExecutor, checkpointThreadId, parseMaxLoops, publicValues } from './run-executor.js';
export {
  createThreadCheckpointReader,
  type ThreadCheckpointReader,
  type CheckpointThreadState,
  type CheckpointSelector,
  type HistoryOptions as CheckpointHistoryOptions,
} from './checkpoint-reader.js';
export { createThreadCheckpoints, type ThreadCheckpointStore } from './thread-checkpoints.js';
export type { StateUpdate, UpdatedCheckpoint, ThreadCheckpointWriter } from './checkpoint-writer.js';
export { checkpointIdFloor, mysqlCheckpointRewinder, sqliteCheckpointRewinder, type ThreadCheckpointRewinder } from './checkpoint-rewind.js';
export { ToolClient, TOOL_RUNNER_PROVIDER, SKILLS_PROVIDER, MCP_PROVIDER, type ToolProvider, type ToolVisibility } from './tool-client.js';
export {
  buildSystemPrompt,
  currentDatetimeTag,
  todoReminder,
  mentionReminders,
  promptTexts,
  BASE_SYSTEM_PROMPT,
  BASE_SYSTEM_PROMPT_ZH,
  DELEGATED_AGENT_SYSTEM_PROMPT,
  DELEGATED_AGENT_SYSTEM_PROMPT_ZH,
  basePrompt,
  PROMPT_LANGUAGES,
  type PromptLanguage,
} from './prompts.js';
export { validateTodos, todoSummary, TODO_STATUSES, TODO_PRIORITIES, type TodoItem, type TodoStatus, type TodoPriority } from './todos.js';
export { LOCAL_TOOL_NAMES, TODO_WRITE_SPEC, TODO_READ_SPEC, DELEGATE_TASK_SPEC, runLocalTool } from './local-tools.js';
export { parseMentions, classifyMention, classifyMentions, AGENT_KEYWORDS, DEFAULT_AGENT_NAMES, type MentionKind, type MentionCatalog } from './mentions.js';
export {
  selectHistory,
  cleanMessages,
  truncateMessages,
  repairToolPairs,
  parseHistoryOptions,
  HistoryOptions,
  HISTORY_STRATEGIES,
  type HistoryStrategy,
} from './history.js';
export { COMPACT_COMMAND, isCompactCommand, estimateTokens, estimateInputTokens, planAutoCompaction, planCommandCompaction } from './compaction.js';
export { resolveModelSlot, hasImages, hasCodeContext, isComplexTask, type RouteDecision, type RouteReason } from './routing.js';
export { addUsage, sumUsage, type TokenUsage, type RunUsage } from './usage.js';
export { messageToJson, parseInputMessages, toJsonValue } from './serialize.js';
export { ModelConfigError, RunInputError } from './errors.js';
export { runJobHandler } from './handlers/run-job.js';
export {
  DelegationCoordinator,
  parseDelegateArgs,
  childConfig,
  childResult,
  finalAnswer,
  childRunId,
  childThreadId,
  delegationId,
  resumeJobId,
  pendingDelegation,
  isDelegationRequest,
  DELEGATE_MAX_LOOPS_DEFAULT,
  DELEGATE_TASK_MAX_CHARS,
  DELEGATION_INTERRUPT,
  DEFAULT_DELEGATION_LIMITS,
  type DelegationLimits,
  type DelegateArgs,
  type DelegatedChild,
  type DelegationRequest,
  type DelegatedResult,
  type DelegationResume,
  type ChildConfig,
  type DelegationCoordinatorDeps,
} from './delegation.js';
// Assistants' agent configuration (issue 11)
export { AgentConfig, AgentConfigurable, agentConfigJsonSchema, SYSTEM_PROMPT_MAX_CHARS } from './agent-config-schema.js';
export { agentPolicyOf, offeredTools, allowedSkills, tightenVerdict, OPEN_POLICY, ASSISTANT_RULE, type AgentPolicy } from './agent-config.js';
export { agentGraphDrawing } from './graph-drawing.js';
// Record and replay (issue 17)
export { IMPORTED_RECORDING_PREFIX } from './recording/run-tape.js';
export { REPLAY_CONFIG_KEY, type Divergence, type ReplayReport, type ReplayTools } from './recording/format.js';
