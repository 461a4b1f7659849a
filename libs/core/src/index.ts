export {
  AgentLoopError,
  TimeoutError,
  UnavailableError,
  ConfigError,
  NotFoundError,
  InvalidArgumentError,
  assertNever,
  errorMessage,
  type ErrorCode,
} from './errors.js';
export { isTransientInfraError } from './transient.js';
// Waiting for another SQLite connection's lock asynchronously (issue 9)
export { isSqliteBusy, sqliteBusyBackoffMs, retryWhileSqliteBusy } from './sqlite-busy.js';
export { parseConfig, runMain, envBool, envInt, envOptionalInt, envBaseUrl, envTenantNumbers, TransportEnv } from './config.js';
export { exitOnSignals, type SignalTarget } from './signals.js';
export { createLogger, silentLogger, type Logger, type LoggerOptions } from './logger.js';
export { newId, newOrderedId, isUuid, sleep } from './ids.js';
export { MAX_JSON_DEPTH, MAX_JSON_MEMBERS, jsonDepthExceeds, jsonShapeExceeds, parseJsonWithin, JsonDepthError } from './json.js';
export { PathRedactor, pathRootVariants, processPathRoots, type PathRoot } from './redact.js';
// Token budgets (issue 17)
export {
  TokenBudgetEnv,
  tenantBudgetLimits,
  budgetsConfigured,
  usagePeriods,
  utcDay,
  tenantBudgetStatus,
  budgetExceededMessage,
  type BudgetPeriod,
  type TenantBudgetLimits,
  type UsagePeriods,
  type BudgetState,
  type BudgetExceeded,
  type TenantBudgetStatus,
  type TenantUsageSoFar,
} from './token-budgets.js';
