/** Sandboxed code execution (issue 15): bubblewrap namespaces, prlimit limits, process-tree kill, capped output. */
export { DEFAULT_LIMITS, formatBytes, sandboxConfigFromEnv, type SandboxConfig, type SandboxLimits } from './limits.js';
export { SANDBOX_WORKSPACE, bwrapArgs, prlimitArgs } from './bwrap-args.js';
export { Sandbox, describeLimit, type LimitHit, type SandboxRequest, type SandboxResult } from './run.js';
