import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError, errorMessage } from '@agentloop/core';

export type Action = 'allow' | 'require_approval' | 'deny';
export type Risk = 'low' | 'medium' | 'high' | 'critical' | 'unspecified';

/** The verdict on one tool call. */
export interface Verdict {
  action: Action;
  reason: string;
  risk: Risk;
  /** Which layer and rule decided: "checker:<tool>", "global:<level>", "tool:<tool>:<level>_risk", "default", "disabled". */
  rule: string;
}

const ActionSchema = z.enum(['allow', 'require_approval', 'deny']);
const LEVELS = ['critical', 'high', 'medium', 'low'] as const;

/** A regular expression from the file, checked when the file is loaded. */
const Pattern = z.string().min(1).max(1000);

const RulesFile = z
  .object({
    global: z
      .object({
        enable_approval: z.boolean().default(true),
        default_action: ActionSchema.default('allow'),
        risk_patterns: z
          .object(
            Object.fromEntries(
              LEVELS.map((l) => [
                l,
                z.object({ patterns: z.array(Pattern).default([]), action: ActionSchema.default('require_approval'), reason: z.string().default('') }).strict().optional(),
              ]),
            ) as Record<(typeof LEVELS)[number], z.ZodOptional<z.ZodObject<{ patterns: z.ZodDefault<z.ZodArray<typeof Pattern>>; action: z.ZodDefault<typeof ActionSchema>; reason: z.ZodDefault<z.ZodString> }>>>,
          )
          .strict()
          .default({}),
      })
      .strict()
      .default({ enable_approval: true, default_action: 'allow', risk_patterns: {} }),
    /** Built-in tool checkers (layer 1), on by default. */
    checkers: z.record(z.string(), z.boolean()).default({}),
    tools: z
      .record(
        z.string(),
        z
          .object({
            enabled: z.boolean().default(true),
            patterns: z
              .object({ high_risk: z.array(Pattern).default([]), medium_risk: z.array(Pattern).default([]), low_risk: z.array(Pattern).default([]) })
              .strict()
              .default({ high_risk: [], medium_risk: [], low_risk: [] }),
            actions: z
              .object({ high_risk: ActionSchema.default('require_approval'), medium_risk: ActionSchema.default('require_approval'), low_risk: ActionSchema.default('allow') })
              .strict()
              .default({ high_risk: 'require_approval', medium_risk: 'require_approval', low_risk: 'allow' }),
          })
          .strict(),
      )
      .default({}),
  })
  .strict();
export type RulesFile = z.infer<typeof RulesFile>;

/** A checker's opinion: a verdict, or undefined to let the next layer decide. */
export type Checker = (args: Record<string, unknown>) => Omit<Verdict, 'rule'> | undefined;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Layer 1: code for tools whose risk depends on their arguments' meaning (seed 001 §7.3). */
export const BUILTIN_CHECKERS: Record<string, Checker> = {
  http_fetch: (args) => {
    const method = str(args.method).toUpperCase() || 'GET';
    if (method !== 'GET' && method !== 'HEAD') {
      return { action: 'require_approval', risk: 'medium', reason: `http_fetch ${method} may change data on ${safeHost(str(args.url))}` };
    }
    return undefined;
  },
  write_file: (args) => {
    const p = str(args.file_path).replace(/^\.\//, '');
    if (p.startsWith('uploads/')) return { action: 'require_approval', risk: 'medium', reason: `write_file would overwrite the user's upload ${p}` };
    return undefined;
  },
  run_bash_command: (args) => {
    const command = str(args.command);
    const high: Array<[RegExp, string]> = [
      [/rm\s+-[a-z]*r[a-z]*f|rm\s+-[a-z]*f[a-z]*r/i, 'rm -rf'],
      [/\bsudo\s+/i, 'sudo'],
      [/chmod\s+777/i, 'chmod 777'],
      [/>\s*\/dev\/sd/i, 'write to a disk device'],
      [/\bdd\s+if=/i, 'dd'],
    ];
    for (const [re, label] of high) if (re.test(command)) return { action: 'require_approval', risk: 'high', reason: `High-risk command: ${label}` };
    const first = command.trim().split(/\s+/)[0] ?? '';
    if (['ls', 'pwd', 'cat', 'echo', 'date', 'whoami'].includes(first) && !/[;&|`$><]/.test(command)) return { action: 'allow', risk: 'low', reason: 'Safe command' };
    return { action: 'require_approval', risk: 'medium', reason: 'Command not on the safe list' };
  },
};
BUILTIN_CHECKERS.shell = BUILTIN_CHECKERS.run_bash_command!;
BUILTIN_CHECKERS.bash = BUILTIN_CHECKERS.run_bash_command!;

function safeHost(url: string): string {
  try {
    return new URL(url).host || 'the target';
  } catch {
    return 'the target';
  }
}

/** Text examined per string value: keeps regex work bounded whatever the arguments hold. */
export const MAX_SCANNED_CHARS = 64 * 1024;

/** Every string value and key of the arguments (nested), each cut to MAX_SCANNED_CHARS. */
function strings(v: unknown, out: string[] = [], depth = 0): string[] {
  if (depth > 32 || out.length > 10_000) return out;
  if (typeof v === 'string') out.push(v.slice(0, MAX_SCANNED_CHARS));
  else if (typeof v === 'number' || typeof v === 'boolean') out.push(String(v));
  else if (Array.isArray(v)) for (const x of v) strings(x, out, depth + 1);
  else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      out.push(k.slice(0, MAX_SCANNED_CHARS));
      strings(x, out, depth + 1);
    }
  }
  return out;
}

interface Compiled {
  re: RegExp;
  source: string;
}

function compile(source: string, where: string): Compiled {
  try {
    return { re: new RegExp(source, 'i'), source };
  } catch (err) {
    throw new ConfigError(`hitl rules: ${where}: invalid regular expression ${JSON.stringify(source)}: ${errorMessage(err)}`);
  }
}

/** The four-layer rules engine of seed 001 §7.4. */
export class ApprovalRules {
  private readonly global: Array<{ level: Risk; patterns: Compiled[]; action: Action; reason: string }>;
  private readonly tools: Map<string, { enabled: boolean; levels: Array<{ level: 'high' | 'medium' | 'low'; patterns: Compiled[]; action: Action }> }>;
  private readonly checkers: Map<string, Checker>;

  constructor(
    readonly file: RulesFile,
    checkers: Record<string, Checker> = BUILTIN_CHECKERS,
  ) {
    this.global = LEVELS.flatMap((level) => {
      const r = file.global.risk_patterns[level];
      if (!r) return [];
      return [{ level, action: r.action, reason: r.reason || `${level}-risk pattern`, patterns: r.patterns.map((p, i) => compile(p, `global.risk_patterns.${level}.patterns[${i}]`)) }];
    });
    this.tools = new Map(
      Object.entries(file.tools).map(([name, t]) => [
        name,
        {
          enabled: t.enabled,
          levels: (['high', 'medium', 'low'] as const).map((level) => ({
            level,
            action: t.actions[`${level}_risk`],
            patterns: t.patterns[`${level}_risk`].map((p, i) => compile(p, `tools.${name}.patterns.${level}_risk[${i}]`)),
          })),
        },
      ]),
    );
    this.checkers = new Map(Object.entries(checkers).filter(([name]) => file.checkers[name] !== false));
  }

  get enabled(): boolean {
    return this.file.global.enable_approval;
  }

  check(tool: string, args: Record<string, unknown>): Verdict {
    if (!this.enabled) return { action: 'allow', reason: 'approval disabled', risk: 'unspecified', rule: 'disabled' };
    // 1. tool checker
    const checker = this.checkers.get(tool);
    const opinion = checker?.(args);
    if (opinion) return { ...opinion, rule: `checker:${tool}` };
    // 2. global risk patterns, on every value
    const values = strings(args);
    for (const g of this.global) {
      for (const p of g.patterns) {
        if (values.some((v) => p.re.test(v))) return { action: g.action, risk: g.level, reason: `${g.reason} (pattern ${p.source})`, rule: `global:${g.level}` };
      }
    }
    // 3. per-tool patterns, on the arguments as JSON
    const t = this.tools.get(tool);
    if (t?.enabled) {
      const json = JSON.stringify(args).slice(0, MAX_SCANNED_CHARS * 4);
      for (const l of t.levels) {
        const hit = l.patterns.find((p) => p.re.test(json));
        if (hit) return { action: l.action, risk: l.level, reason: `${l.level}-risk pattern ${hit.source} for ${tool}`, rule: `tool:${tool}:${l.level}_risk` };
      }
    }
    // 4. default
    const action = this.file.global.default_action;
    return { action, reason: action === 'allow' ? '' : `default action for ${tool}`, risk: 'unspecified', rule: 'default' };
  }

  static parse(text: string, source = 'hitl_rules.yaml', checkers?: Record<string, Checker>): ApprovalRules {
    let raw: unknown;
    try {
      raw = parseYaml(text) ?? {};
    } catch (err) {
      throw new ConfigError(`${source} is not valid YAML: ${errorMessage(err)}`);
    }
    const parsed = RulesFile.safeParse(raw);
    if (!parsed.success) {
      throw new ConfigError(`${source} is invalid: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
    }
    return new ApprovalRules(parsed.data, checkers);
  }

  static async load(path: string, checkers?: Record<string, Checker>): Promise<ApprovalRules> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      throw new ConfigError(`HITL_RULES: cannot read ${path}: ${errorMessage(err)}`);
    }
    return ApprovalRules.parse(text, path, checkers);
  }
}
