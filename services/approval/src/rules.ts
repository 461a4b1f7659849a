import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError, errorMessage } from '@agentloop/core';
import { builtinCheckers, HOST_PATTERN, type Action, type CheckContext, type Checker, type Opinion } from './checkers.js';
import { compilePattern, Pacer, PatternSet, scanForms } from './scan.js';

export type { Action, CheckContext, Checker, Opinion, Risk } from './checkers.js';

/** The verdict on one tool call. */
export interface Verdict extends Opinion {
  /**
   * Which layer and rule decided: "checker:<tool>", "global:<level>",
   * "tool:<tool>:<level>_risk", "default", "limits" (too large or too deep to
   * examine: a human decides), or "disabled" (approval switched off).
   */
  rule: string;
}

/**
 * Most characters one check examines: the arguments' strings and keys (and
 * the text an append continues), then their JSON for layer 3, each counted
 * before and after normalization. Every string is scanned whole (RE2 is linear
 * in the text: see scan.ts), so this bounds the work of one check — about a
 * second of CPU, in slices that yield to the event loop. Tool arguments are
 * already bounded upstream (the gateway's BODY_LIMIT_BYTES and the tool-runner's
 * WRITE_MAX_BYTES, both 10 MB by default); anything past this bound is not
 * skipped but sent to a human (rule "limits").
 */
export const MAX_SCANNED_CHARS = 32 * 1024 * 1024;
/** At most this many strings (values, keys and key=value pairs) and this nesting depth; beyond, a human decides. */
export const MAX_SCANNED_VALUES = 100_000;
export const MAX_SCANNED_DEPTH = 32;
/** Characters of a value joined to its key ("api_key=…") for the patterns that look for assignments. */
const PAIR_VALUE_CHARS = 256;

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

/** What the global patterns examine, or why the arguments cannot be examined. */
interface Collected {
  texts: string[];
  chars: number;
  /** Set when a bound was passed: the call goes to a human. */
  overLimit?: string;
}

/**
 * Every string value and key of the arguments (nested), numbers and booleans
 * as text, and for each scalar value `key=value` (the value's first 256
 * characters) so that `{"password": "hunter2"}` reads like the assignment it is.
 */
function collect(args: Record<string, unknown>): Collected {
  const out: Collected = { texts: [], chars: 0 };
  const push = (t: string) => {
    out.texts.push(t);
    out.chars += t.length;
  };
  const walk = (v: unknown, depth: number): void => {
    if (out.overLimit) return;
    if (out.texts.length > MAX_SCANNED_VALUES) {
      out.overLimit = `more than ${MAX_SCANNED_VALUES} strings`;
      return;
    }
    if (out.chars > MAX_SCANNED_CHARS) {
      out.overLimit = `more than ${MAX_SCANNED_CHARS} characters`;
      return;
    }
    if (typeof v === 'string') push(v);
    else if (typeof v === 'number' || typeof v === 'boolean') push(String(v));
    else if (v && typeof v === 'object') {
      if (depth >= MAX_SCANNED_DEPTH) {
        out.overLimit = `nested deeper than ${MAX_SCANNED_DEPTH} levels`;
        return;
      }
      if (Array.isArray(v)) for (const x of v) walk(x, depth + 1);
      else
        for (const [k, x] of Object.entries(v)) {
          push(k);
          if (typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean') push(`${k}=${String(x).slice(0, PAIR_VALUE_CHARS)}`);
          walk(x, depth + 1);
        }
    }
  };
  walk(args, 0);
  return out;
}

const tooLarge = (why: string): Verdict => ({
  action: 'require_approval',
  risk: 'high',
  reason: `The arguments are too large to examine (${why}); a human must decide`,
  rule: 'limits',
});

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
  private readonly global: Array<{ level: Level; patterns: PatternSet; action: Action; reason: string }>;
  private readonly tools: Map<string, { enabled: boolean; levels: Array<{ level: 'high' | 'medium' | 'low'; patterns: PatternSet; action: Action }> }>;
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
      return [
        {
          level,
          action: r.action,
          reason: r.reason || `${level}-risk pattern`,
          patterns: new PatternSet(r.patterns.map((p, i) => compilePattern(p, `global.risk_patterns.${level}.patterns[${i}]`))),
        },
      ];
    });
    this.tools = new Map(
      Object.entries(file.tools).map(([name, t]) => [
        name,
        {
          enabled: t.enabled,
          levels: (['high', 'medium', 'low'] as const).map((level) => ({
            level,
            action: t.actions[`${level}_risk`],
            patterns: new PatternSet(t.patterns[`${level}_risk`].map((p, i) => compilePattern(p, `tools.${name}.patterns.${level}_risk[${i}]`))),
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

  /**
   * The verdict on one call. Every string is examined whole, after
   * normalization (scan.ts); `context` carries what the orchestrator knows
   * beyond the arguments (resolved paths, the text an append continues).
   * Arguments past the bounds (MAX_SCANNED_*) are not examined: a human decides.
   */
  async check(tool: string, args: Record<string, unknown>, context: CheckContext = {}): Promise<Verdict> {
    if (!this.enabled) return { action: 'allow', reason: 'Approval is disabled (global.enable_approval: false)', risk: 'unspecified', rule: 'disabled' };

    const collected = collect(args);
    const preceding = context.precedingText ?? '';
    // An append is scanned joined to the end of the file it extends: a secret split across appends is seen whole.
    const appended = preceding === '' ? undefined : preceding + (typeof args.content === 'string' ? args.content : '');
    const total = collected.chars + (appended?.length ?? 0);
    if (collected.overLimit) return tooLarge(collected.overLimit);
    if (total > MAX_SCANNED_CHARS) return tooLarge(`${total} characters; the rules examine at most ${MAX_SCANNED_CHARS}`);

    // 1. The tool's checker.
    const checker = this.checkers.get(tool);
    if (checker) {
      let opinion: Opinion | undefined;
      try {
        opinion = checker(args, context);
      } catch (err) {
        // A broken checker must not let the call through unexamined.
        return {
          action: 'require_approval',
          risk: 'high',
          reason: `The ${tool} checker failed (${errorMessage(err)}); a human must decide`,
          rule: `checker:${tool}`,
        };
      }
      if (opinion) return { ...opinion, rule: `checker:${tool}` };
    }

    // 2. Global risk patterns, on every string and key, normalized (invisible characters out, NFKC; also without accents).
    const pacer = new Pacer();
    if (this.global.length > 0) {
      // Compatibility decomposition can lengthen text (one character can become 18): what is scanned is bounded too.
      const overNormalized = tooLarge(`more than ${MAX_SCANNED_CHARS} characters once normalized`);
      let budget = MAX_SCANNED_CHARS;
      const texts: string[] = [];
      for (const t of collected.texts) {
        const forms = await scanForms(t, pacer, budget);
        if (forms === undefined) return overNormalized;
        for (const f of forms) budget -= f.length;
        texts.push(...forms);
      }
      let joined: string[] = [];
      if (appended !== undefined) {
        const forms = await scanForms(appended, pacer, budget);
        if (forms === undefined) return overNormalized;
        joined = forms;
      }
      for (const g of this.global) {
        for (const text of texts) {
          const hit = await g.patterns.firstMatch(text, pacer);
          if (hit) return { action: g.action, risk: g.level, reason: `${g.reason} (pattern ${hit.source})`, rule: `global:${g.level}` };
        }
        for (const text of joined) {
          const hit = await g.patterns.firstMatch(text, pacer);
          if (hit)
            return {
              action: g.action,
              risk: g.level,
              reason: `${g.reason} (pattern ${hit.source}, with the end of the file this call appends to)`,
              rule: `global:${g.level}`,
            };
        }
      }
    }

    // 3. The tool's patterns, on the arguments as JSON.
    const t = this.tools.get(tool);
    if (t?.enabled && t.levels.some((l) => l.patterns.size > 0)) {
      const raw = JSON.stringify(args);
      if (raw.length > MAX_SCANNED_CHARS) return tooLarge(`${raw.length} characters of JSON; the rules examine at most ${MAX_SCANNED_CHARS}`);
      const jsonForms = await scanForms(raw, pacer, MAX_SCANNED_CHARS);
      if (jsonForms === undefined) return tooLarge(`more than ${MAX_SCANNED_CHARS} characters of JSON once normalized`);
      for (const l of t.levels) {
        for (const json of jsonForms) {
          const hit = await l.patterns.firstMatch(json, pacer);
          if (hit) return { action: l.action, risk: l.level, reason: `${tool}: ${l.level}-risk pattern ${hit.source}`, rule: `tool:${tool}:${l.level}_risk` };
        }
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
