export { createApprovalService, APPROVAL_SUBJECTS, APPROVAL_SERVICE, APPROVAL_VERSION, type ApprovalDeps, type ApprovalService } from './service.js';
export { ApprovalRules, BUILTIN_CHECKERS, MAX_SCANNED_CHARS, type Verdict, type Action, type Risk, type Checker, type RulesFile } from './rules.js';
export { loadApprovalConfig, ApprovalEnv, DEFAULT_RULES_PATH, type ApprovalConfig } from './config.js';
