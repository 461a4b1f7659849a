import { isIP } from 'node:net';
import path from 'node:path';
import { RE2JS } from 're2js';

export type Action = 'allow' | 'require_approval' | 'deny';
export type Risk = 'low' | 'medium' | 'high' | 'critical' | 'unspecified';

/** An opinion on one tool call: what to do, why, and how risky it is. */
export interface Opinion {
  action: Action;
  reason: string;
  risk: Risk;
}

/** What the orchestrator knows about a call beyond its arguments (CheckApprovalRequest fields 8 and 9). */
export interface CheckContext {
  /**
   * Path arguments as the tool-runner resolved them: argument name →
   * workspace-relative path after normalization and symlinks (e.g.
   * `{ file_path: "uploads/report.pdf" }` for `/…/uploads/report.pdf`).
   */
  resolvedPaths?: Readonly<Record<string, string>>;
  /** The end (at most 4 KiB) of the file an append extends; scanned joined to the call's `content`. */
  precedingText?: string;
}

/**
 * Layer 1 of the rules: code for one tool, for risks that depend on what the
 * arguments mean rather than on how they look. Returns undefined for "no
 * opinion" (the next layers decide). Must not throw; if it does, the call is
 * sent to a human (fail closed). Strings reach it whole (the rules bound their
 * total size first), so a checker must stay linear in its input.
 */
export type Checker = (args: Record<string, unknown>, context?: CheckContext) => Opinion | undefined;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
/** A value as it may appear in a reason: one line, bounded. */
const shown = (s: string, max = 200): string => {
  // eslint-disable-next-line no-control-regex
  const line = s.slice(0, max + 1).replace(/[\u0000-\u001f\u007f]/g, ' ');
  return line.length > max ? `${line.slice(0, max)}…` : line;
};

export interface HttpFetchCheckerOptions {
  /**
   * Hosts whose requests are high risk: "intranet.example.com" (that host) or
   * "*.corp.example.com" (any host below it). IP literals are always high risk.
   */
  highRiskHosts?: readonly string[];
}

/** A host pattern as written in the rules file: a name, or `*.` and a domain. */
export const HOST_PATTERN = /^(\*\.)?[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/i;

function hostMatches(host: string, pattern: string): boolean {
  const p = pattern.toLowerCase();
  return p.startsWith('*.') ? host.endsWith(p.slice(1)) : host === p;
}

/**
 * http_fetch: a request to an IP literal or to a listed host → approval, high
 * (the tool's own SSRF guard refuses private addresses; this asks a human about
 * the rest); a method other than GET/HEAD (it may change data) → approval, medium.
 */
export function httpFetchChecker(options: HttpFetchCheckerOptions = {}): Checker {
  const hosts = (options.highRiskHosts ?? []).map((h) => h.toLowerCase());
  return (args) => {
    const method = (str(args.method).trim() || 'GET').toUpperCase();
    let host: string | undefined;
    try {
      // The WHATWG parser normalizes numeric hosts (0x7f.1, 2130706433) to dotted IPv4.
      host = new URL(str(args.url)).hostname
        .toLowerCase()
        .replace(/^\[|\]$/g, '')
        .replace(/\.$/, '');
    } catch {
      host = undefined; // the tool refuses a URL it cannot parse; nothing to judge here
    }
    if (host) {
      if (isIP(host) !== 0) {
        return { action: 'require_approval', risk: 'high', reason: `http_fetch ${shown(method, 16)} to the IP address ${shown(host)} (not a host name)` };
      }
      const hit = hosts.find((p) => hostMatches(host, p));
      if (hit) return { action: 'require_approval', risk: 'high', reason: `http_fetch ${shown(method, 16)} to ${shown(host)}, a high-risk host (${hit})` };
    }
    if (method !== 'GET' && method !== 'HEAD') {
      return { action: 'require_approval', risk: 'medium', reason: `http_fetch ${shown(method, 16)} may change data on ${host ? shown(host) : 'the target'}` };
    }
    return undefined;
  };
}

const UPLOADS = /^uploads(\/|$)/i;

/**
 * A path argument as the workspace reads it, relative to its root: `\` as `/`,
 * `.`, `..` and `//` folded. Undefined when the spelling alone cannot say
 * where it lands: absolute (`/…`, `~…`, `C:…`; the workspace maps absolute
 * paths under its root, so `/srv/data/…/uploads/x` may be an upload) or
 * leaving the root (`../…`).
 */
function workspaceRelative(raw: string): string | undefined {
  const p = raw.replace(/\\/g, '/');
  if (p.startsWith('/') || p.startsWith('~') || /^[a-z]:(\/|$)/i.test(p)) return undefined;
  const n = path.posix.normalize(p).replace(/^(\.\/)+/, '');
  if (n === '..' || n.startsWith('../')) return undefined;
  return n;
}

/**
 * write_file: writing under uploads/ replaces (or appends to) a file the user
 * uploaded → approval, medium. outputs/ and temp/ are the agent's own.
 *
 * The path judged is the one the tool-runner resolved (`context.resolvedPaths.file_path`),
 * whatever the model's spelling; the spelling is judged too, so either under
 * uploads/ asks. Without a resolved path, a path whose spelling cannot be
 * judged (absolute, leaving the workspace) goes to a human rather than through.
 * Without one, a symlink under outputs/ pointing into uploads/ is not seen:
 * that needs the resolved path.
 */
export function writeFileChecker(): Checker {
  return (args, context) => {
    const raw = str(args.file_path);
    const verb = args.append === true ? 'append to' : 'overwrite';
    const upload = (p: string): Opinion => ({ action: 'require_approval', risk: 'medium', reason: `write_file would ${verb} the user's upload ${shown(p)}` });
    const spelled = raw === '' ? undefined : workspaceRelative(raw);
    if (spelled !== undefined && UPLOADS.test(spelled)) return upload(spelled);

    const resolved = context?.resolvedPaths?.file_path;
    if (resolved !== undefined) {
      const r = workspaceRelative(resolved);
      if (r === undefined || r === '' || r === '.') {
        return { action: 'require_approval', risk: 'medium', reason: `write_file to ${shown(resolved)}: not a workspace-relative path; a human must decide` };
      }
      return UPLOADS.test(r) ? upload(r) : undefined;
    }
    if (raw === '') return undefined; // the tool refuses a call without a path
    if (spelled === undefined) {
      return {
        action: 'require_approval',
        risk: 'medium',
        reason: `write_file to ${shown(raw)}: where an absolute path (or one leaving the workspace) lands cannot be told without the resolved path; a human must decide`,
      };
    }
    return undefined;
  };
}

/** Shell commands that only read (seed 001 §7.3), allowed when the command has no shell operators. */
export const SAFE_COMMANDS: readonly string[] = ['ls', 'pwd', 'cat', 'echo', 'date', 'whoami'];

/** High-risk shell patterns besides rm -rf, in RE2 (linear in the command, whatever its length). */
const SHELL_HIGH_RISK: ReadonlyArray<readonly [RE2JS, string]> = (
  [
    [String.raw`\bsudo\b`, 'sudo'],
    [String.raw`\bchmod\s+(-[a-z]+\s+)*0?777\b`, 'chmod 777'],
    [String.raw`>\s*/dev/sd`, '> /dev/sd*'],
    [String.raw`\bdd\s[^;&|\n]*\bif=`, 'dd if='],
    [String.raw`\bmkfs(\.\w+)?\b`, 'mkfs'],
  ] as const
).map(([re, label]) => [RE2JS.compile(re, RE2JS.CASE_INSENSITIVE), label] as const);

/** rm with both a recursive and a force flag, in any spelling (-rf, -fr, -r -f, -Rf, --recursive --force). */
function isRecursiveForceRm(command: string): boolean {
  const words = command.split(/[\s;&|()]+/);
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (w !== 'rm' && !w.endsWith('/rm')) continue;
    let recursive = false;
    let force = false;
    for (let j = i + 1; j < words.length && words[j]!.startsWith('-'); j++) {
      const f = words[j]!;
      if (f === '--recursive') recursive = true;
      else if (f === '--force') force = true;
      else if (!f.startsWith('--')) {
        if (/[rR]/.test(f)) recursive = true;
        if (f.includes('f')) force = true;
      }
    }
    if (recursive && force) return true;
  }
  return false;
}

/**
 * run_bash_command / shell (seed 001 §7.3): rm -rf, sudo, chmod 777, dd if=,
 * writes to /dev/sd*, mkfs → approval, high; a safe read-only command without
 * shell operators → allow; anything else → approval, medium.
 */
export function shellChecker(): Checker {
  return (args) => {
    const command = str(args.command);
    if (isRecursiveForceRm(command)) return { action: 'require_approval', risk: 'high', reason: 'High-risk command: rm -rf (recursive forced delete)' };
    for (const [re, label] of SHELL_HIGH_RISK) {
      if (re.test(command)) return { action: 'require_approval', risk: 'high', reason: `High-risk command: ${label}` };
    }
    const first = command.trimStart().split(/\s/, 1)[0] ?? '';
    if (SAFE_COMMANDS.includes(first) && !/[;&|`$<>\n\r]/.test(command)) return { action: 'allow', risk: 'low', reason: `Read-only command: ${first}` };
    return { action: 'require_approval', risk: 'medium', reason: `Command not on the safe list (${SAFE_COMMANDS.join(', ')})` };
  };
}

/** The built-in checkers, by tool name. */
export function builtinCheckers(options: { httpFetch?: HttpFetchCheckerOptions } = {}): Record<string, Checker> {
  const shell = shellChecker();
  return {
    http_fetch: httpFetchChecker(options.httpFetch),
    write_file: writeFileChecker(),
    run_bash_command: shell,
    shell,
    bash: shell,
  };
}
