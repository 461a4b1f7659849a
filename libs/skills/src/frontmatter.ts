/**
 * SKILL.md frontmatter per the Agent Skills specification (agentskills.io/specification, the format
 * of Anthropic's published skills), read strict-but-lenient: every deviation from the spec is a
 * warning the registry logs and lists, and only a frontmatter that cannot be read at all (not YAML,
 * not a mapping) makes a skill unusable. docs/skills-ecosystem.md says why.
 */
import { z } from 'zod';

/** Spec: 1-64 characters, lowercase letters, digits and hyphens, no leading, trailing or double hyphen. */
export const SPEC_NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const SPEC_NAME_MAX = 64;
/** Spec: description 1-1024 characters. */
export const SPEC_DESCRIPTION_MAX = 1024;
/** Spec: compatibility at most 500 characters. */
export const SPEC_COMPATIBILITY_MAX = 500;
/** The keys the spec defines, plus `version` (read as a deprecated fallback for `metadata.version`). */
const SPEC_KEYS = new Set(['name', 'description', 'license', 'compatibility', 'allowed-tools', 'metadata']);

/** The frontmatter as YAML's failsafe schema reads it: scalars are strings, maps and lists kept. */
export const RawFrontmatter = z.record(z.string(), z.unknown());
export type RawFrontmatter = z.infer<typeof RawFrontmatter>;

/** What the frontmatter declares, each field present only when usable. */
export interface SpecFields {
  name?: string;
  description?: string;
  license?: string;
  compatibility?: string;
  /** Tool names from `allowed-tools` (a pattern such as `Bash(git:*)` keeps its tool name); null when absent. */
  allowedTools: string[] | null;
  /** `metadata`: string keys to string values. */
  metadata: Record<string, string>;
  /** `metadata.version`, else the deprecated top-level `version`; '' when neither. */
  version: string;
  /** Deviations from the spec, one sentence each. */
  warnings: string[];
}

/**
 * Reads the spec's fields out of a frontmatter mapping, with a warning for each deviation. `folder`
 * is the skill's folder name, which the spec requires `name` to equal.
 */
export function readSpecFields(raw: RawFrontmatter, folder: string): SpecFields {
  const warnings: string[] = [];
  const text = (key: string): string | undefined => {
    const v = raw[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'string') return v.trim();
    warnings.push(`\`${key}\` should be a string; it is ignored`);
    return undefined;
  };
  const name = text('name');
  if (!name) warnings.push('`name` is missing (the spec requires it); the folder name is used');
  else {
    if (name.length > SPEC_NAME_MAX || !SPEC_NAME_PATTERN.test(name)) {
      warnings.push(`\`name\` "${name.slice(0, 80)}" does not follow the spec (1-64 lowercase letters, digits and single hyphens)`);
    }
    if (name !== folder) warnings.push(`\`name\` "${name.slice(0, 80)}" differs from the folder name "${folder}" (the spec requires them to match)`);
  }
  const description = text('description');
  if (!description) warnings.push('`description` is missing (the spec requires it)');
  else if (description.length > SPEC_DESCRIPTION_MAX) warnings.push(`\`description\` is longer than ${SPEC_DESCRIPTION_MAX} characters; it is cut`);
  const license = text('license');
  const compatibility = text('compatibility');
  if (compatibility && compatibility.length > SPEC_COMPATIBILITY_MAX) warnings.push(`\`compatibility\` is longer than ${SPEC_COMPATIBILITY_MAX} characters`);
  const metadata = readMetadata(raw.metadata, warnings);
  const allowedTools = readAllowedTools(raw['allowed-tools'], warnings);
  let version = metadata.version ?? '';
  const topLevel = text('version');
  if (topLevel !== undefined) {
    if (version) warnings.push('top-level `version` is ignored: `metadata.version` is set');
    else {
      version = topLevel;
      warnings.push('top-level `version` is deprecated; declare it as `metadata.version`');
    }
  }
  const unknown = Object.keys(raw).filter((k) => !SPEC_KEYS.has(k) && k !== 'version');
  if (unknown.length > 0) warnings.push(`unknown frontmatter keys ignored: ${unknown.join(', ')} (put extra data under \`metadata\`)`);
  return {
    ...(name ? { name } : {}),
    ...(description ? { description } : {}),
    ...(license ? { license } : {}),
    ...(compatibility ? { compatibility } : {}),
    allowedTools,
    metadata,
    version,
    warnings,
  };
}

function readMetadata(v: unknown, warnings: string[]): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) {
    warnings.push('`metadata` should be a map of keys to string values; it is ignored');
    return {};
  }
  const out: Record<string, string> = {};
  for (const [k, value] of Object.entries(v as Record<string, unknown>)) {
    if (typeof value === 'string') out[k] = value.trim();
    else warnings.push(`\`metadata.${k}\` should be a string; it is ignored`);
  }
  return out;
}

/**
 * `allowed-tools`: the spec's space-delimited string (seed 004 writes it comma-separated, and YAML
 * lists are common too). A tool pattern such as `Bash(git status:*)` keeps its tool name.
 */
export function parseAllowedTools(value: string | readonly string[]): string[] {
  const text = typeof value === 'string' ? value : value.join(' ');
  const names = [...text.matchAll(/([^\s,()]+)(?:\([^)]*\))?/g)].map((m) => m[1]!).filter(Boolean);
  return [...new Set(names)];
}

function readAllowedTools(v: unknown, warnings: string[]): string[] | null {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string') return parseAllowedTools(v);
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) {
    warnings.push('`allowed-tools` should be a space-delimited string; a list is accepted');
    return parseAllowedTools(v as string[]);
  }
  warnings.push('`allowed-tools` should be a space-delimited string; it is ignored');
  return null;
}
