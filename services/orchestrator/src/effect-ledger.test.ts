import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunLifecycle, createSqliteStore, type Store } from '@agentloop/store';
import { executeWithLedger, interruptedMessage } from './effect-ledger.js';
import type { ToolCallInput, ToolCallResult } from './tool-client.js';

describe('executeWithLedger', () => {
  let store: Store;
  const executed: string[] = [];
  const exec = async (c: ToolCallInput): Promise<ToolCallResult> => {
    executed.push(c.toolCallId);
    return { content: `ran ${c.name}`, isError: false };
  };
  const call = (toolCallId: string, idempotent: boolean) => ({
    tenantId: 't',
    threadId: 'th',
    runId: 'run-1',
    toolCallId,
    name: idempotent ? 'read_file' : 'write_file',
    args: {},
    idempotent,
  });

  beforeEach(async () => {
    executed.length = 0;
    store = createSqliteStore({ path: ':memory:' });
    await store.migrate();
    await store.createThread({ tenantId: 't', threadId: 'th' });
    await new RunLifecycle(store).admit({ run: { tenantId: 't', threadId: 'th', runId: 'run-1', assistantId: 'a' }, whenBusy: 'reject' });
  });
  afterEach(async () => store.close());

  it('runs a new call once and records its result', async () => {
    const out = await executeWithLedger(store, call('c1', false), exec);
    expect(out).toMatchObject({ content: 'ran write_file', source: 'executed' });
    expect((await store.listToolEffects('t', 'run-1'))[0]).toMatchObject({ state: 'completed', content: 'ran write_file' });
  });

  it('never runs a completed call again: a retry gets the recorded result', async () => {
    await executeWithLedger(store, call('c1', false), exec);
    const again = await executeWithLedger(store, call('c1', false), exec);
    expect(again).toMatchObject({ content: 'ran write_file', source: 'recorded' });
    expect(executed).toEqual(['c1']);
  });

  it('refuses to re-run a side-effecting call that was in flight when its worker died', async () => {
    await store.claimToolEffect({ tenantId: 't', threadId: 'th', runId: 'run-1', toolCallId: 'c2', toolName: 'write_file' });
    const out = await executeWithLedger(store, call('c2', false), exec);
    expect(out).toMatchObject({ content: interruptedMessage('write_file'), isError: true, source: 'refused' });
    expect(out.content).toBe('Error: interrupted before completion; not retried because write_file has side effects');
    expect(executed).toEqual([]);
  });

  it('re-runs an idempotent call that was in flight when its worker died', async () => {
    await store.claimToolEffect({ tenantId: 't', threadId: 'th', runId: 'run-1', toolCallId: 'c3', toolName: 'read_file' });
    const out = await executeWithLedger(store, call('c3', true), exec);
    expect(out).toMatchObject({ content: 'ran read_file', source: 're-executed' });
    expect((await store.listToolEffects('t', 'run-1'))[0]?.executions).toBe(2);
  });

  it("takes the executor's recorded reply for a call that ran before its worker died, without running it", async () => {
    await store.claimToolEffect({ tenantId: 't', threadId: 'th', runId: 'run-1', toolCallId: 'c4', toolName: 'write_file' });
    const out = await executeWithLedger(store, call('c4', false), exec, async () => ({ content: 'Wrote 9 bytes', isError: false }));
    expect(out).toMatchObject({ content: 'Wrote 9 bytes', source: 'recorded' });
    expect(executed).toEqual([]);
  });

  it('runs a started call whose request never reached a tool-runner (it was lost with the dead worker)', async () => {
    await store.claimToolEffect({ tenantId: 't', threadId: 'th', runId: 'run-1', toolCallId: 'c5', toolName: 'write_file' });
    const out = await executeWithLedger(store, call('c5', false), exec, async () => 'not-executed');
    expect(out).toMatchObject({ content: 'ran write_file', source: 'executed' });
    expect(executed).toEqual(['c5']);
  });

  it("does not record a call that needs the user's input, and runs its retry with the answer", async () => {
    const needsInput = async (c: ToolCallInput): Promise<ToolCallResult> => {
      executed.push(c.toolCallId);
      if (!c.elicitationAnswerJson)
        return { content: '', isError: false, elicitation: { server: 's', message: 'Who?', mode: 'form', requestedSchema: {}, url: null } };
      return { content: `ran with ${c.elicitationAnswerJson}`, isError: false };
    };
    const first = await executeWithLedger(store, call('c6', false), needsInput);
    expect(first.elicitation).toMatchObject({ server: 's', message: 'Who?' });
    expect((await store.listToolEffects('t', 'run-1'))[0]).toMatchObject({ toolCallId: 'c6', state: 'started' });
    // Without an answer, an open claim of a call with side effects is not run again…
    expect(await executeWithLedger(store, call('c6', false), needsInput)).toMatchObject({ content: interruptedMessage('write_file'), source: 'refused' });
    // …but the claim the "needs input" attempt left is reopened by the retry carrying the answer.
    const other = await executeWithLedger(store, call('c7', false), needsInput);
    expect(other.elicitation).toBeDefined();
    const answered = await executeWithLedger(store, { ...call('c7', false), elicitationAnswerJson: '{"action":"decline"}' }, needsInput);
    expect(answered).toMatchObject({ content: 'ran with {"action":"decline"}', source: 're-executed' });
    expect((await store.listToolEffects('t', 'run-1')).find((e) => e.toolCallId === 'c7')).toMatchObject({
      state: 'completed',
      content: 'ran with {"action":"decline"}',
    });
    expect(executed).toEqual(['c6', 'c7', 'c7']);
  });
});
