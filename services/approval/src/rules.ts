import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError, errorMessage } from '@agentloop/core';
import { builtinCheckers, HOST_PATTERN, type Action, type Checker, type Opinion } from './checkers.js';

export type { Action, Checker, Opinion, Risk } from './checkers.js';

/** The verdict on one tool call. */
export interface Verdict extends Opinion {
  /**
   * Which layer and rule decided: "checker:<tool>", "global:<level>",
   * "tool:<tool>:<level>_risk", "default", or "disabled" (approval switched off).
   */
  rule: string;
}

/**
 * Text examined per string value (and per key) of the arguments. JavaScript
 * regular expressions have no time limit, so a pattern that backtracks badly
 * could stall the service on a huge argument; bounding the text bounds the work.
 * Content past this point is not examined by the patterns.
 */
export const MAX_SCANNED_CHARS = 64 * 1024;
/** Layer 3 examines the arguments as JSON, up to this many characters. */
export const MAX_SCANNED_JSON_CHARS = 4 * MAX_SCANNED_CHARS;
/** At most this many strings (values and keys) and this nesting depth are examined. */
const MAX_SCANNED_VALUES = 10_000;
const MAX_DEPTH = 32;

/** An action; the seed's "prompt" is accepted for require_approval. */
const ActionSchema = z.preprocess((v) => (v === 'prompt' ? 'require_approval' : v), z.enum(['allow', 'require_approval', 'deny']));
const LEVELS = ['critical', 'high', 'medium', 'low'] as const;
type Level = (typeof LEVELS)[number];

/** A regular expression from the file (compiled and checked when the file is loaded). */
const Pattern = z.string().min(1).max(1000);

const GlobalLevel = z
  .object({
    patterns: z.array(Pattern).default([]),
    action: ActionSchema.default('require_approval'),
    reason: z.string().max(500).default(''),
  })
  .strict();

const ToolRules = z
  .object({
    /** false: this tool's patterns (layer 3) are not applied. */
    enabled: z.boolean().default(true),
    patterns: z
      .object({ high_risk: z.array(Pattern).default([]), medium_risk: z.array(Pattern).default([]), low_risk: z.array(Pattern).default([]) })
      .strict()
      .default({ high_risk: [], medium_risk: [], low_risk: [] }),
    actions: z
      .object({
        high_risk: ActionSchema.default('require_approval'),
        medium_risk: ActionSchema.default('require_approval'),
        low_risk: ActionSchema.default('allow'),
      })
      .strict()
      .default({ high_risk: 'require_approval', medium_risk: 'require_approval', low_risk: 'allow' }),
  })
  .strict();

/** `checkers.<tool>`: true / false, or settings. */
const CheckerToggle = z.union([z.boolean(), z.object({ enabled: z.boolean().default(true) }).strict()]);
const HttpFetchChecker = z.union([
  z.boolean(),
  z
    .object({
      enabled: z.boolean().default(true),
      high_risk_hosts: z.array(z.string().regex(HOST_PATTERN, 'expected a host name or *.domain')).default([]),
    })
    .strict(),
]);

/** hitl_rules.yaml (seed 001 §7.5). */
export const RulesFile = z
  .object({
    global: z
      .object({
        enable_approval: z.boolean().default(true),
        default_action: ActionSchema.default('allow'),
        risk_patterns: z
          .object({ critical: GlobalLevel.optional(), high: GlobalLevel.optional(), medium: GlobalLevel.optional(), low: GlobalLevel.optional() })
          .strict()
          .default({}),
      })
      .strict()
      .default({ enable_approval: true, default_action: 'allow', risk_patterns: {} }),
    /** Layer 1, on by default: `checkers.<tool>: false` switches one off. */
    checkers: z.object({ http_fetch: HttpFetchChecker.optional() }).catchall(CheckerToggle).default({}),
    tools: z.record(z.string(), ToolRules).default({}),
  })
  .strict();
export type RulesFile = z.infer<typeof RulesFile>;

interface Compiled {
  re: RegExp;
  source: string;
}

function compile(source: string, where: string): Compiled {
  try {
    return { re: new RegExp(source, 'i'), source };
  } catch (err) {
    throw new ConfigError(`${where}: invalid regular expression ${JSON.stringify(source)}: ${errorMessage(err)}`);
  }
}

/** Every string value and key of the arguments (nested), each cut to MAX_SCANNED_CHARS. */
function strings(v: unknown, out: string[] = [], depth = 0): string[] {
  if (depth > MAX_DEPTH || out.length >= MAX_SCANNED_VALUES) return out;
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

const enabledIn = (setting: boolean | { enabled: boolean } | undefined): boolean => (typeof setting === 'object' ? setting.enabled : setting !== false);

/**
 * The four-layer rules engine of seed 001 §7.4; the first layer with an
 * opinion decides:
 *  1. tool checkers (code, by tool name),
 *  2. global risk patterns on every string and key of the arguments (critical → low),
 *  3. the tool's own patterns on the arguments as JSON (high → low),
 *  4. `global.default_action`.
 */
export class ApprovalRules {
  private readonly global: Array<{ level: Level; patterns: Compiled[]; action: Action; reason: string }>;
  private readonly tools: Map<string, { enabled: boolean; levels: Array<{ level: 'high' | 'medium' | 'low'; patterns: Compiled[]; action: Action }> }>;
  private readonly checkers: Map<string, Checker>;

  /**
   * @param file the validated rules file
   * @param extraCheckers checkers by tool name, added to (or replacing) the built-in ones
   */
  constructor(
    readonly file: RulesFile,
    extraCheckers: Record<string, Checker> = {},
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
    const http = file.checkers.http_fetch;
    const all = { ...builtinCheckers({ httpFetch: { highRiskHosts: typeof http === 'object' ? http.high_risk_hosts : [] } }), ...extraCheckers };
    this.checkers = new Map(Object.entries(all).filter(([name]) => enabledIn(file.checkers[name])));
  }

  /** `global.enable_approval`. */
  get enabled(): boolean {
    return this.file.global.enable_approval;
  }

  /** Tools with a checker (layer 1). */
  get checkedTools(): string[] {
    return [...this.checkers.keys()].sort();
  }

  check(tool: string, args: Record<string, unknown>): Verdict {
    if (!this.enabled) return { action: 'allow', reason: 'Approval is disabled (global.enable_approval: false)', risk: 'unspecified', rule: 'disabled' };

    // 1. The tool's checker.
    const checker = this.checkers.get(tool);
    if (checker) {
      let opinion: Opinion | undefined;
      try {
        opinion = checker(args);
      } catch (err) {
        // A broken checker must not let the call through unexamined.
        return { action: 'require_approval', risk: 'high', reason: `The ${tool} checker failed (${errorMessage(err)}); a human must decide`, rule: `checker:${tool}` };
      }
      if (opinion) return { ...opinion, rule: `checker:${tool}` };
    }

    // 2. Global risk patterns, on every string and key.
    const values = strings(args);
    for (const g of this.global) {
      for (const p of g.patterns) {
        if (values.some((v) => p.re.test(v))) return { action: g.action, risk: g.level, reason: `${g.reason} (pattern ${p.source})`, rule: `global:${g.level}` };
      }
    }

    // 3. The tool's patterns, on the arguments as JSON.
    const t = this.tools.get(tool);
    if (t?.enabled) {
      const json = JSON.stringify(args).slice(0, MAX_SCANNED_JSON_CHARS);
      for (const l of t.levels) {
        const hit = l.patterns.find((p) => p.re.test(json));
        if (hit) return { action: l.action, risk: l.level, reason: `${tool}: ${l.level}-risk pattern ${hit.source}`, rule: `tool:${tool}:${l.level}_risk` };
      }
    }

    // 4. The default.
    const action = this.file.global.default_action;
    return { action, reason: `No rule matched (default action: ${action})`, risk: 'unspecified', rule: 'default' };
  }

  /** Parses and validates rules text; a problem is a ConfigError naming the file and the setting. */
  static parse(text: string, source = 'hitl_rules.yaml', extraCheckers?: Record<string, Checker>): ApprovalRules {
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
    try {
      return new ApprovalRules(parsed.data, extraCheckers);
    } catch (err) {
      if (err instanceof ConfigError) throw new ConfigError(`${source}: ${err.message}`);
      throw err;
    }
  }

  /** Reads and parses a rules file (HITL_RULES). */
  static async load(path: string, extraCheckers?: Record<string, Checker>): Promise<ApprovalRules> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      throw new ConfigError(`HITL_RULES: cannot read ${path}: ${errorMessage(err)}`);
    }
    return ApprovalRules.parse(text, path, extraCheckers);
  }
}
