/**
 * "This JSON column's top-level key equals that value", as SQL, so a filter on thread metadata or
 * values runs in the database (COUNT without reading rows). SQLite compares the key's JSON text
 * (`->`, minified) with the value's; MariaDB compares the two as JSON (JSON_EQUALS). A missing key
 * matches nothing, a key holding null matches null — LangGraph's containment of one top-level key.
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { AgentLoopError } from '@agentloop/core';
import type { SqlDialectName } from '../schema.js';

/** The JSON path of a top-level key (quoted, so dots and spaces in keys are literal). */
function keyPath(key: string): string {
  // A quote or backslash would end the quoted path member early: refused rather than escaped, as
  // SQLite and MariaDB disagree on escapes inside path members.
  if (/["\\]/.test(key)) throw new AgentLoopError('INVALID_ARGUMENT', `filter key ${JSON.stringify(key)} may not contain a quote or a backslash`);
  return `$."${key}"`;
}

export function jsonKeyEquals(dialect: SqlDialectName, column: 'metadata' | 'state_values', key: string, value: unknown): RawBuilder<SqlBool> {
  const path = keyPath(key);
  const json = JSON.stringify(value ?? null);
  if (dialect === 'mysql')
    // `= 1`: MariaDB 10.11 counts a bare JSON_EQUALS(NULL, …) in WHERE as true (a missing key matched every filter).
    return sql<SqlBool>`JSON_EQUALS(JSON_EXTRACT(${sql.ref(column)}, ${path}), ${json}) = 1`;
  return sql<SqlBool>`(${sql.ref(column)} -> ${path}) = json(${json})`;
}
