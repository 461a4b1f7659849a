import { isIP } from 'node:net';
import path from 'node:path';

export type Action = 'allow' | 'require_approval' | 'deny';
export type Risk = 'low' | 'medium' | 'high' | 'critical' | 'unspecified';

/** An opinion on one tool call: what to do, why, and how risky it is. */
export interface Opinion {
  action: Action;
  reason: string;
  risk: Risk;
}

/**
 * Layer 1 of the rules: code for one tool, for risks that depend on what the
 * arguments mean rather than on how they look. Returns undefined for "no
 * opinion" (the next layers decide). Must not throw; if it does, the call is
 * sent to a human (fail closed).
 */
export type Checker = (args: Record<string, unknown>) => Opinion | undefined;

/** Text a checker examines per argument (see MAX_SCANNED_CHARS in rules.ts). */
const CHECKER_SCAN_CHARS = 64 * 1024;

const str = (v: unknown): string => (typeof v === 'string' ? v.slice(0, CHECKER_SCAN_CHARS) : '');
/** A value as it may appear in a reason: one line, bounded. */
const shown = (s: string, max = 200): string => {
  // eslint-disable-next-line no-control-regex
  const line = s.replace(/[\u0000-\u001f\u007f]/g, ' ');
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
      host = new URL(str(args.url)).hostname.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
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

/**
 * write_file: writing under uploads/ replaces (or appends to) a file the user
 * uploaded → approval, medium. outputs/ and temp/ are the agent's own.
 */
export function writeFileChecker(): Checker {
  return (args) => {
    const raw = str(args.file_path);
    if (raw === '') return undefined;
    const p = path.posix
      .normalize(raw.replace(/\\/g, '/'))
      .replace(/^\/+/, '')
      .replace(/^(\.\/)+/, '');
    if (!/^uploads(\/|$)/i.test(p)) return undefined;
    const verb = args.append === true ? 'append to' : 'overwrite';
    return { action: 'require_approval', risk: 'medium', reason: `write_file would ${verb} the user's upload ${shown(p)}` };
  };
}

/** Shell commands that only read (seed 001 §7.3), allowed when the command has no shell operators. */
export const SAFE_COMMANDS: readonly string[] = ['ls', 'pwd', 'cat', 'echo', 'date', 'whoami'];

/** High-risk shell patterns besides rm -rf (each linear: no nested quantifiers). */
const SHELL_HIGH_RISK: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bsudo\b/i, 'sudo'],
  [/\bchmod\s+(-[a-z]+\s+)*0?777\b/i, 'chmod 777'],
  [/>\s*\/dev\/sd/i, '> /dev/sd*'],
  [/\bdd\s[^;&|\n]*\bif=/i, 'dd if='],
  [/\bmkfs(\.\w+)?\b/i, 'mkfs'],
];

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
    const first = command.trim().split(/\s+/)[0] ?? '';
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
