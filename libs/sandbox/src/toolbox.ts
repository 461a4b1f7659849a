import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The skills toolbox (docs/skills-ecosystem.md "The toolbox"): a folder made by
 * deploy/skills-toolbox/install.sh holding a Python venv (`python/`) with the document packages
 * Anthropic's skills import and Node packages (`node/node_modules`) their instructions require().
 * Named by SKILLS_TOOLBOX; the code sandbox and skill scripts mount it read-only, run its Python,
 * and find its commands on PATH and its packages on NODE_PATH — so `python scripts/x.py`,
 * `python -m markitdown` and `require('docx')` work as the skills' authors wrote them.
 */
export interface Toolbox {
  /** The folder, mounted read-only at the same path inside a sandbox. */
  dir: string;
  /** The venv's Python. */
  python: string;
  /** Folders to put first on PATH (the venv's bin: python, python3, pip's console scripts). */
  binDirs: string[];
  /** NODE_PATH entry (the toolbox's node_modules), when it has one. */
  nodeModules?: string;
}

/** SKILLS_TOOLBOX (absolute; its `python/bin/python3` must exist) → the toolbox; unset → undefined. Throws naming the variable. */
export function toolboxFromEnv(env: Record<string, string | undefined> = process.env): Toolbox | undefined {
  const raw = env.SKILLS_TOOLBOX?.trim();
  if (!raw) return undefined;
  if (!path.isAbsolute(raw)) throw new Error(`SKILLS_TOOLBOX: expected an absolute path, got "${raw}"`);
  const dir = path.resolve(raw);
  const python = path.join(dir, 'python', 'bin', 'python3');
  if (!existsSync(python)) {
    throw new Error(`SKILLS_TOOLBOX: ${python} does not exist: install the toolbox with deploy/skills-toolbox/install.sh ${dir}`);
  }
  const nodeModules = path.join(dir, 'node', 'node_modules');
  return {
    dir,
    python,
    binDirs: [path.join(dir, 'python', 'bin')],
    ...(existsSync(nodeModules) ? { nodeModules } : {}),
  };
}

/** PATH inside a sandbox: the toolbox's bin folders (if any), then `rest`, without duplicates. */
export function sandboxPath(toolbox: Toolbox | undefined, rest: readonly string[]): string {
  return [...new Set([...(toolbox?.binDirs ?? []), ...rest])].join(':');
}
