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
export { detectFileType, fileTypeOfName, type DetectedFileType } from './file-types.js';
export { listWorkspaceFiles, type WorkspaceFileEntry, type ListFilesOptions, type FileListing } from './listing.js';
export { sanitizeFileName, MAX_FILE_NAME_BYTES } from './file-names.js';
export { recordRunStart, filesChangedSinceRunStart, RUN_RECORDS_DIR } from './run-outputs.js';
