/**
 * The memory tools (issue 12): `remember`, `recall`, `forget`. Facts live in the run's store
 * (`TenantMemoryStore`, one tenant) under ["memories", <user>], so a fact remembered in one thread
 * is recalled in any other thread of the same user, and never by another user or tenant. Without
 * a user id the tools say so instead of sharing one memory between users. They are ordinary tool
 * calls for approval (checked by the rules like any other: a secret in a fact needs a human).
 */
import { createHash, randomUUID } from 'node:crypto';
import { ToolMessage } from '@langchain/core/messages';
import type { BaseStore } from '@langchain/langgraph-checkpoint';
import { create, ToolMetadataSchema, ToolSpecSchema, type ToolSpec } from '@agentloop/proto';
import { errorMessage } from '@agentloop/core';

export const MEMORY_TOOL_NAMES = ['remember', 'recall', 'forget'] as const;
export type MemoryToolName = (typeof MEMORY_TOOL_NAMES)[number];
export const isMemoryTool = (name: string): name is MemoryToolName => (MEMORY_TOOL_NAMES as readonly string[]).includes(name);

/** Root label of users' memories. */
export const MEMORY_NAMESPACE = 'memories';
/** Longest fact: a memory is a sentence or two, not a document. */
export const MAX_FACT_CHARS = 2000;
const MAX_KEY_CHARS = 128;
const RECALL_DEFAULT = 5;
const RECALL_MAX = 20;

/**
 * The namespace of a user's memories. A label may not contain "." (user ids are often e-mails),
 * so "%" and "." are percent-encoded: distinct user ids stay distinct labels.
 */
export function memoryNamespace(userId: string): string[] {
  return [MEMORY_NAMESPACE, userId.replaceAll('%', '%25').replaceAll('.', '%2E')];
}

const spec = (name: string, description: string, schema: Record<string, unknown>, displayName: string): ToolSpec =>
  create(ToolSpecSchema, {
    name,
    description,
    parametersJsonSchema: JSON.stringify(schema),
    metadata: create(ToolMetadataSchema, { category: 'memory', tags: ['builtin'], idempotent: name === 'recall', displayName, availableToSubagent: false }),
  });

export const MEMORY_TOOL_SPECS: readonly ToolSpec[] = [
  spec(
    'remember',
    'Save a fact about the user to long-term memory, kept across conversations (preferences, names, ongoing projects). One short fact per call. ' +
      'Never store passwords, keys or other secrets. Give a key to replace an earlier fact with that key.',
    {
      type: 'object',
      properties: {
        fact: { type: 'string', description: `The fact, in a sentence (at most ${MAX_FACT_CHARS} characters).` },
        key: { type: 'string', description: 'Stable key of this fact (optional; a new one is generated when missing).' },
      },
      required: ['fact'],
    },
    'Remembering a fact',
  ),
  spec(
    'recall',
    "Search the user's long-term memory for facts relevant to a query. Returns {ok, memories: [{key, fact}]}, best matches first.",
    {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'What to look for; empty lists the most recent facts.' },
        limit: { type: 'integer', minimum: 1, maximum: RECALL_MAX, default: RECALL_DEFAULT },
      },
      required: ['query'],
    },
    'Recalling from memory',
  ),
  spec(
    'forget',
    "Delete one fact from the user's long-term memory by its key (as returned by remember or recall).",
    { type: 'object', properties: { key: { type: 'string', description: 'Key of the fact to delete.' } }, required: ['key'] },
    'Forgetting a fact',
  ),
];

/** The run's user: `config.configurable.user_id`, else the thread's metadata `user_id`; null when neither is a non-empty string. */
export function runUserId(configurable: Record<string, unknown> | undefined, threadMetadata: Record<string, unknown> | undefined): string | null {
  for (const v of [configurable?.user_id, threadMetadata?.user_id]) if (typeof v === 'string' && v.trim() !== '') return v;
  return null;
}

const generatedKey = (toolCallId: string): string =>
  toolCallId === '' ? randomUUID() : `m-${createHash('sha256').update(toolCallId).digest('hex').slice(0, 32)}`;

export interface MemoryCall {
  id: string;
  name: MemoryToolName;
  args: Record<string, unknown>;
}

/** Runs one memory tool call; every failure becomes an error ToolMessage the model can read. */
export async function runMemoryTool(call: MemoryCall, memory: { store: BaseStore; userId(): Promise<string | null> } | undefined): Promise<ToolMessage> {
  const reply = (content: unknown, ok: boolean) =>
    new ToolMessage({ content: JSON.stringify(content), tool_call_id: call.id, name: call.name, status: ok ? 'success' : 'error' });
  const fail = (error: string) => reply({ ok: false, error }, false);
  if (!memory) return fail('Long-term memory is not available in this deployment.');
  const { store } = memory;
  try {
    const userId = await memory.userId();
    if (userId === null) {
      return fail(
        'No user is known for this run, and memory is kept per user: nothing was saved or read. ' +
          'The client sets the user with config.configurable.user_id or the thread metadata user_id.',
      );
    }
    const namespace = memoryNamespace(userId);
    switch (call.name) {
      case 'remember': {
        const fact = call.args.fact;
        if (typeof fact !== 'string' || fact.trim() === '') return fail('"fact" must be a non-empty string.');
        if (fact.length > MAX_FACT_CHARS) return fail(`"fact" is longer than ${MAX_FACT_CHARS} characters; keep one short fact per call.`);
        // Without a key, one derived from the tool call id: a call executed again (a run resumed after a
        // crash) replaces its own fact instead of adding a duplicate.
        const key = call.args.key === undefined || call.args.key === null || call.args.key === '' ? generatedKey(call.id) : call.args.key;
        if (typeof key !== 'string' || key.length > MAX_KEY_CHARS) return fail(`"key" must be a string of at most ${MAX_KEY_CHARS} characters.`);
        await store.put(namespace, key, { fact }, ['fact']);
        return reply({ ok: true, key }, true);
      }
      case 'recall': {
        const query = typeof call.args.query === 'string' ? call.args.query : '';
        const limit = Math.min(RECALL_MAX, Math.max(1, Number.isInteger(call.args.limit) ? (call.args.limit as number) : RECALL_DEFAULT));
        const hits = await store.search(namespace, { ...(query.trim() ? { query } : {}), limit });
        return reply({ ok: true, memories: hits.map((h) => ({ key: h.key, fact: h.value.fact })) }, true);
      }
      case 'forget': {
        const key = call.args.key;
        if (typeof key !== 'string' || key === '') return fail('"key" must be a non-empty string.');
        const existing = await store.get(namespace, key);
        if (!existing) return fail(`No memory has the key ${JSON.stringify(key)}.`);
        await store.delete(namespace, key);
        return reply({ ok: true, key }, true);
      }
    }
  } catch (err) {
    return fail(`Memory is unavailable: ${errorMessage(err)}`);
  }
}
