/**
 * Namespaces of the memory store (issue 12): paths of labels such as ["memories", "u1"]. Stored
 * joined with "." — a label may not contain one (LangGraph Platform refuses it too) — so a prefix
 * is one range of the primary key, and matched in the layer with "*" wildcards for listings.
 */
import { InvalidArgumentError } from '@agentloop/core';
import { jsonEqual } from '../repositories/rows.js';
import type { JsonObject } from '../types.js';

export const NAMESPACE_SEPARATOR = '.';
/** Longest joined namespace and longest key, in characters (the primary key must fit InnoDB's 3072 bytes). */
export const MAX_NAMESPACE_LENGTH = 256;
export const MAX_ITEM_KEY_LENGTH = 256;
/** Candidates a filtered or query search examines at most (most recently updated first), and distinct namespaces a listing reads. */
export const STORE_SEARCH_SCAN_LIMIT = 10_000;

/** Checks the labels (non-empty strings without ".") and returns the joined path. */
export function joinNamespace(namespace: readonly string[], field = 'namespace', allowEmpty = false): string {
  if (!Array.isArray(namespace) || (!allowEmpty && namespace.length === 0)) throw new InvalidArgumentError(`Invalid ${field}: expected at least one label`);
  namespace.forEach((label, i) => {
    if (typeof label !== 'string' || label.length === 0 || label.includes(NAMESPACE_SEPARATOR)) {
      throw new InvalidArgumentError(`Invalid ${field}[${i}] ${JSON.stringify(label)}: a label is a non-empty string without "."`);
    }
  });
  const joined = namespace.join(NAMESPACE_SEPARATOR);
  if (joined.length > MAX_NAMESPACE_LENGTH)
    throw new InvalidArgumentError(`Invalid ${field}: longer than ${MAX_NAMESPACE_LENGTH} characters once joined with "."`);
  return joined;
}

export function checkItemKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_ITEM_KEY_LENGTH) {
    throw new InvalidArgumentError(`Invalid key ${JSON.stringify(key)}: expected 1-${MAX_ITEM_KEY_LENGTH} characters`);
  }
}

export const splitNamespace = (joined: string): string[] => joined.split(NAMESPACE_SEPARATOR);

/** Whether `labels` starts (or, from the end, ends) with `pattern`, "*" matching any one label. */
function matchesAt(labels: readonly string[], pattern: readonly string[], fromEnd: boolean): boolean {
  if (pattern.length > labels.length) return false;
  const offset = fromEnd ? labels.length - pattern.length : 0;
  return pattern.every((p, i) => p === '*' || p === labels[offset + i]);
}

export function namespaceMatches(labels: readonly string[], prefix: readonly string[] | undefined, suffix: readonly string[] | undefined): boolean {
  return (!prefix || matchesAt(labels, prefix, false)) && (!suffix || matchesAt(labels, suffix, true));
}

const OPERATORS = ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte'] as const;
type Operator = (typeof OPERATORS)[number];

function compare(actual: unknown, op: Operator, expected: unknown): boolean {
  switch (op) {
    case '$eq':
      return jsonEqual(actual, expected);
    case '$ne':
      return !jsonEqual(actual, expected);
    default: {
      if (!((typeof actual === 'number' && typeof expected === 'number') || (typeof actual === 'string' && typeof expected === 'string'))) return false;
      if (op === '$gt') return actual > expected;
      if (op === '$gte') return actual >= expected;
      if (op === '$lt') return actual < expected;
      return actual <= expected;
    }
  }
}

const isOperatorObject = (v: unknown): v is Record<Operator, unknown> =>
  typeof v === 'object' &&
  v !== null &&
  !Array.isArray(v) &&
  Object.keys(v).length > 0 &&
  Object.keys(v).every((k) => (OPERATORS as readonly string[]).includes(k));

/** LangGraph's search filter over the value's top-level fields: equality, or `{$op: value}` comparisons. */
export function valueMatches(value: JsonObject, filter: JsonObject | undefined): boolean {
  return Object.entries(filter ?? {}).every(([field, wanted]) =>
    isOperatorObject(wanted) ? Object.entries(wanted).every(([op, v]) => compare(value[field], op as Operator, v)) : jsonEqual(value[field], wanted),
  );
}

/** Cosine similarity; 0 when either vector is zero or they differ in length. */
export function cosine(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length || a.length === 0) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}
