/** Sandboxed code execution (issue 15): bubblewrap namespaces, per-run cgroups, prlimit limits, process-tree kill, capped output, an allow-listed HTTP(S) proxy. */
export { DEFAULT_LIMITS, formatBytes, sandboxConfigFromEnv, type SandboxConfig, type SandboxLimits } from './limits.js';
export { SANDBOX_WORKSPACE, bwrapArgs, prlimitArgs } from './bwrap-args.js';
export { sandboxPath, toolboxFromEnv, type Toolbox } from './toolbox.js';
export { CgroupDirs, CgroupHost, ownPaths, type CgroupEvents, type CgroupHostOptions, type CgroupLimits } from './cgroup.js';
export { SandboxNetworkProxy, type NetworkProxyOptions } from './network-proxy.js';
export { Sandbox, describeLimit, type LimitHit, type SandboxRequest, type SandboxResult, type SandboxStatus } from './run.js';
