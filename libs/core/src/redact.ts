import { realpathSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';

/** A host folder and the name it is shown as once redacted. */
export interface PathRoot {
  /** Absolute host path (normalized; a trailing separator is ignored). "/" is never redacted. */
  path: string;
  /**
   * What replaces it: `<workspace-root>`, `skills/pdf`, `~`... The empty label makes paths under the
   * root relative to it (`<root>/uploads/a.csv` → `uploads/a.csv`, `<root>` alone → `.`).
   */
  label: string;
}

// A character that continues a path segment: a root followed by one of these is a different folder
// (`/data/ws` is not a prefix of `/data/ws2`). A dot continues it unless it ends a sentence. Before a
// root there must be no path character either (`/tmp` inside `/var/tmp` is not the temp folder).
const SEGMENT_CHAR = String.raw`[A-Za-z0-9_~@%+=-]`;
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Replaces absolute host paths under known roots with their logical names, so that error text and
 * script output reveal nothing of the host's layout: `/srv/agentloop/data/workspaces/acme/t1/uploads/a.csv`
 * becomes `uploads/a.csv` (the thread's workspace, label ''), a skill's folder `skills/pdf/...`, the
 * temp folder `<tmp>/...`. The longest root wins (a workspace inside the data dir inside the app
 * folder), `file://` URLs of those paths are redacted as well, and a root only matches at the start
 * of a path and up to a segment boundary. Immutable; `with` adds roots.
 */
export class PathRedactor {
  private readonly roots: readonly PathRoot[];
  private readonly pattern: RegExp | undefined;
  private readonly labels: ReadonlyMap<string, string>;

  constructor(roots: Iterable<PathRoot>) {
    const labels = new Map<string, string>();
    for (const r of roots) {
      if (!path.isAbsolute(r.path)) continue;
      const p = path.normalize(r.path).replace(/\/+$/, '');
      // "/" (or an empty path) would swallow every absolute path; the first label given for a path wins.
      if (p === '' || labels.has(p)) continue;
      labels.set(p, r.label);
    }
    this.labels = labels;
    this.roots = [...labels].map(([p, label]) => ({ path: p, label }));
    const alternatives = [...labels.keys()].sort((a, b) => b.length - a.length).map(escapeRegExp);
    this.pattern =
      alternatives.length === 0
        ? undefined
        : new RegExp(String.raw`(?<![A-Za-z0-9_.~/-])(?:file://)?(${alternatives.join('|')})(?!${SEGMENT_CHAR}|\.[A-Za-z0-9_~@%+=.-])(/)?`, 'g');
  }

  /** The text with every path under a known root replaced by its logical name. */
  redact(text: string): string {
    if (!this.pattern || text === '') return text;
    return text.replace(this.pattern, (_m, root: string, slash: string | undefined) => {
      const label = this.labels.get(root) ?? '';
      if (label === '') return slash ? '' : '.';
      return slash ? `${label}/` : label;
    });
  }

  /** A redactor with these roots added (they win over the existing ones for the same path). */
  with(roots: Iterable<PathRoot>): PathRedactor {
    return new PathRedactor([...roots, ...this.roots]);
  }

  /** The roots it redacts (for diagnostics and tests). */
  list(): readonly PathRoot[] {
    return this.roots;
  }
}

/**
 * A root as given and as its real path (symlinks resolved), when they differ: host text may show
 * either (`/tmp` is `/private/tmp` on macOS; a data dir may sit behind a link). Relative paths are
 * resolved against the cwd. A path that does not exist (yet) is kept as given.
 */
export function pathRootVariants(root: string, label: string): PathRoot[] {
  const abs = path.resolve(root);
  const out: PathRoot[] = [{ path: abs, label }];
  try {
    const real = realpathSync(abs);
    if (real !== abs) out.push({ path: real, label });
  } catch {
    // Not there yet: the configured form is what text will show.
  }
  return out;
}

/**
 * The host folders every process has: the cwd (`<app>`), the OS temp folder (`<tmp>`) and the
 * home folder (`~`), each as given and as its real path. Services add their own (data dir,
 * workspace root, skills root) with higher precedence.
 */
export function processPathRoots(): PathRoot[] {
  return [...pathRootVariants(tmpdir(), '<tmp>'), ...pathRootVariants(homedir(), '~'), ...pathRootVariants(process.cwd(), '<app>')];
}
