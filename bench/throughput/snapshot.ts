/**
 * A read-only copy of AgentLoop at a commit, to measure while the working tree is being edited:
 * `git archive <ref>` extracted into a directory of its own, with a node_modules of links to the repo's installed
 * packages — except the workspace packages (@agentloop/*), which point into the copy — and, for each
 * workspace with a node_modules of its own (npm nests a version that conflicts with the root's there,
 * e.g. libs/core), a link to it in the copy's workspace.
 * Nothing in the repository (working tree, index, refs) is written.
 *
 * The copy's directory is named by the commit and by the checkout whose node_modules it links to: a
 * copy made from another checkout (a git worktree since removed, say) would hold links into that
 * checkout, dangling once it is gone ("Cannot find package 'tsx'"), and two checkouts measuring
 * the same commit at once must not rebuild each other's copy under it.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export function prepareSnapshot(repoRoot: string, ref: string, parentDir: string): { root: string; commit: string } {
  const commit = execFileSync('git', ['rev-parse', '--verify', `${ref}^{commit}`], { cwd: repoRoot, encoding: 'utf8' }).trim();
  const checkout = createHash('sha256').update(realpathSync(repoRoot)).digest('hex').slice(0, 8);
  const root = path.join(parentDir, `agentloop-bench-snapshot-${commit.slice(0, 12)}-${checkout}`);
  const done = path.join(root, '.bench-snapshot-complete');
  if (existsSync(done)) return { root, commit };
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  const tar = execFileSync('git', ['archive', '--format=tar', commit], { cwd: repoRoot, maxBuffer: 1024 * 1024 * 1024 });
  execFileSync('tar', ['-x', '-C', root], { input: tar });
  const nm = path.join(repoRoot, 'node_modules');
  const out = path.join(root, 'node_modules');
  mkdirSync(out);
  for (const entry of readdirSync(nm)) {
    if (entry === '@agentloop') continue;
    symlinkSync(path.join(nm, entry), path.join(out, entry));
  }
  mkdirSync(path.join(out, '@agentloop'));
  for (const pkg of readdirSync(path.join(nm, '@agentloop'))) {
    // e.g. ../../services/approval: the same relative link, now into the copy.
    const target = readlinkSync(path.join(nm, '@agentloop', pkg));
    symlinkSync(target, path.join(out, '@agentloop', pkg));
  }
  for (const group of ['apps', 'libs', 'services', 'tests']) {
    const dir = path.join(repoRoot, group);
    if (!existsSync(dir)) continue;
    for (const ws of readdirSync(dir)) {
      const nested = path.join(dir, ws, 'node_modules');
      const inCopy = path.join(root, group, ws);
      if (existsSync(nested) && existsSync(inCopy) && !existsSync(path.join(inCopy, 'node_modules'))) symlinkSync(nested, path.join(inCopy, 'node_modules'));
    }
  }
  writeFileSync(done, `${commit}\n`);
  return { root, commit };
}
