import { WorkspaceError, displayPath } from './errors.js';

/**
 * Tenant and thread ids become directory names, so they are held to a shape
 * that can never climb out of the root: no separators, no leading dot, no "..".
 */
export const WORKSPACE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

export function validateWorkspaceId(kind: 'tenant_id' | 'thread_id' | 'run_id', id: string): void {
  if (!WORKSPACE_ID_PATTERN.test(id) || id.includes('..')) {
    const shown = id === '' ? '(empty)' : `"${displayPath(id.length > 140 ? `${id.slice(0, 140)}…` : id)}"`;
    throw new WorkspaceError(
      'INVALID_ARGUMENT',
      `Invalid ${kind} ${shown}: expected 1-128 characters from A-Z a-z 0-9 _ . : - starting with a letter or digit, without ".."`,
    );
  }
}
