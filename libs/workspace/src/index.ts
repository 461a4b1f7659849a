export { WorkspaceError, PathOutsideWorkspaceError, WorkspacePermissionError, FileNotFoundError, displayPath } from './errors.js';
export {
  resolveWorkspacePath,
  isWithin,
  errnoCode,
  mapFsError,
  WRITABLE_DIRS,
  WORKSPACE_DIRS,
  type ResolvedPath,
  type ResolveOptions,
  type PathAccess,
} from './paths.js';
export { WorkspaceManager, Workspace, validateWorkspaceId, WORKSPACE_ID_PATTERN, type WorkspaceMetadata, type WorkspaceManagerOptions } from './workspace.js';
export { createTempDir, type TempDir } from './temp-dir.js';
