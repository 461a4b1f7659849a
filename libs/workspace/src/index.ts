export { WorkspaceError, PathOutsideWorkspaceError, PathLimitError, WorkspacePermissionError, FileNotFoundError, displayPath } from './errors.js';
export {
  resolveWorkspacePath,
  checkPathLimits,
  shownPathHead,
  isWithin,
  errnoCode,
  mapFsError,
  WRITABLE_DIRS,
  WORKSPACE_DIRS,
  RESERVED_NAMES,
  MAX_PATH_BYTES,
  MAX_NAME_BYTES,
  MAX_PATH_SEGMENTS,
  MAX_SYMLINK_HOPS,
  type ResolvedPath,
  type ResolveOptions,
  type PathAccess,
} from './paths.js';
export {
  WorkspaceManager,
  Workspace,
  validateWorkspaceId,
  WORKSPACE_ID_PATTERN,
  PRIVATE_DIR,
  type EnsureOptions,
  type WorkspaceMetadata,
  type WorkspaceManagerOptions,
} from './workspace.js';
export { inspectWorkspacePath, MAX_INSPECT_TAIL_BYTES, type PathInspection, type InspectOptions } from './inspect.js';
export { createTempDir, type TempDir } from './temp-dir.js';
export { detectFileType, fileTypeOfName, type DetectedFileType } from './file-types.js';
export { listWorkspaceFiles, type WorkspaceFileEntry, type ListFilesOptions, type FileListing } from './listing.js';
export { sanitizeFileName, MAX_FILE_NAME_BYTES } from './file-names.js';
export {
  recordRunStart,
  filesChangedSinceRunStart,
  noteRunStartWithoutWorkspace,
  forgetRunStartWithoutWorkspace,
  RUN_RECORDS_DIR,
  LEGACY_RUN_RECORDS_DIR,
  type RunRecordsPlace,
} from './run-outputs.js';
