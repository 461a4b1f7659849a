export { createApprovalService, APPROVAL_SUBJECTS, APPROVAL_SERVICE, APPROVAL_VERSION, type ApprovalDeps, type ApprovalService } from './service.js';
export { ApprovalRules, RulesFile, MAX_SCANNED_CHARS, MAX_SCANNED_VALUES, MAX_SCANNED_DEPTH, type Verdict } from './rules.js';
export { normalizeForScan } from './scan.js';
export {
  builtinCheckers,
  httpFetchChecker,
  writeFileChecker,
  shellChecker,
  SAFE_COMMANDS,
  type Action,
  type Risk,
  type Opinion,
  type Checker,
  type CheckContext,
  type HttpFetchCheckerOptions,
} from './checkers.js';
export { argsSha256, canonicalJson } from './handlers/common.js';
export { verifyTrail } from './handlers/verify.js';
export { ApprovalError } from './errors.js';
export { loadApprovalConfig, ApprovalEnv, DEFAULT_RULES_PATH, type ApprovalConfig } from './config.js';
