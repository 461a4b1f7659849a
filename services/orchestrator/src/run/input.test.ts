import { describe, expect, it } from 'vitest';
import { Command } from '@langchain/langgraph';
import { HumanMessage } from '@langchain/core/messages';
import { RunInputError } from '../errors.js';
import { MAX_LOOPS_MAX, MAX_LOOPS_MIN } from '../graph.js';
import type { ResolvedModel } from '../models/registry.js';
import {
  delegationResumeInput,
  graphInput,
  maxLoopsOf,
  modelOf,
  parseJsonObject,
  parseMaxLoops,
  resolveRunModel,
  runCheckpointConfig,
  selectedSlot,
  storedConfig,
  type CheckpointConfig,
  type StateReader,
} from './input.js';
import { delegationRequest, fakeJob, stateWith } from './testing.js';

const cp = { configurable: { thread_id: 't1:th1', run_id: 'r1' } };
const user = (text: string) => JSON.stringify({ messages: [{ role: 'user', content: text }] });

/** A graph whose checkpoint is `state`; counts the reads. */
function graphAt(state: ReturnType<typeof stateWith>): StateReader & { reads: number } {
  return {
    reads: 0,
    async getState() {
      this.reads++;
      return state;
    },
  };
}

/** A model registry that resolves any selection to a model of `provider`, naming the slot asked for. */
function registry(provider: ResolvedModel['provider']) {
  return {
    resolve: (selection: unknown): ResolvedModel => {
      if (selection === 'bad') throw new Error('unknown slot');
      return { model: undefined as never, label: typeof selection === 'string' ? selection : 'base', provider, modelId: 'm' };
    },
    configuredSlots: () => ['base' as const, 'reasoning' as const],
  };
}

describe('run input: config', () => {
  it('parseMaxLoops takes integers (and integer strings) within the bounds, else the default for absent', () => {
    expect(parseMaxLoops(undefined, 7)).toBe(7);
    expect(parseMaxLoops(null, 7)).toBe(7);
    expect(parseMaxLoops(MAX_LOOPS_MIN, 7)).toBe(MAX_LOOPS_MIN);
    expect(parseMaxLoops(String(MAX_LOOPS_MAX), 7)).toBe(MAX_LOOPS_MAX);
    for (const bad of [MAX_LOOPS_MIN - 1, MAX_LOOPS_MAX + 1, 2.5, 'ten', true, {}]) expect(() => parseMaxLoops(bad, 7)).toThrow(RunInputError);
  });

  it("parseJsonObject: empty and null are {}, arrays, scalars and bad JSON are the client's error", () => {
    expect(parseJsonObject('', 'config')).toEqual({});
    expect(parseJsonObject('null', 'config')).toEqual({});
    expect(parseJsonObject('{"a":1}', 'config')).toEqual({ a: 1 });
    expect(() => parseJsonObject('[1]', 'config')).toThrow('config must be an object');
    expect(() => parseJsonObject('3', 'command')).toThrow('command must be an object');
    expect(() => parseJsonObject('{', 'config')).toThrow('config is not valid JSON');
  });

  it('selectedSlot reads a slot name or { slot }', () => {
    expect(selectedSlot('reasoning')).toBe('reasoning');
    expect(selectedSlot({ slot: 'vision' })).toBe('vision');
    expect(selectedSlot(undefined)).toBeNull();
    expect(selectedSlot({ model: 'x' })).toBeNull();
  });

  it('resolveRunModel: a router for real providers, none for the scripted one; model_pref wins over the selected slot', () => {
    const real = resolveRunModel({ configurable: { model: 'reasoning' } }, registry('openai-compatible'));
    expect(real.resolved.label).toBe('reasoning');
    expect(real.modelPref).toBe('reasoning');
    expect([...real.router!.configured]).toEqual(['base', 'reasoning']);
    expect(real.router!.forSlot('base').label).toBe('base');
    const pinned = resolveRunModel({ configurable: { model: 'reasoning', model_pref: 'vision' } }, registry('scripted'));
    expect(pinned.router).toBeUndefined();
    expect(pinned.modelPref).toBe('vision');
    expect(resolveRunModel({}, registry('scripted')).modelPref).toBeNull();
  });

  it('storedConfig: one parse of the stored config; configurable is {} when unreadable, config() throws the parse error', () => {
    const stored = storedConfig(fakeJob({ configJson: JSON.stringify({ configurable: { model: 'reasoning' }, max_loops: 4 }) }));
    expect(stored.config()).toEqual({ configurable: { model: 'reasoning' }, max_loops: 4 });
    // The recording, the environment and the model read one object, not copies.
    expect(stored.config()).toBe(stored.config());
    expect(stored.configurable).toBe(stored.config().configurable);
    for (const json of ['', 'null', '{"configurable":"x"}', '{"configurable":[1]}'])
      expect(storedConfig(fakeJob({ configJson: json })).configurable).toEqual({});
    for (const [json, message] of [
      ['{', 'config is not valid JSON'],
      ['[1]', 'config must be an object'],
    ] as const) {
      const bad = storedConfig(fakeJob({ configJson: json }));
      expect(bad.configurable).toEqual({});
      expect(() => bad.config()).toThrow(RunInputError);
      expect(() => bad.config()).toThrow(message);
    }
  });

  it('maxLoopsOf: configurable.max_loops, else the top-level max_loops, else the default', () => {
    expect(maxLoopsOf({ config: { max_loops: 5 }, configurable: { max_loops: 3 } }, 9)).toBe(3);
    expect(maxLoopsOf({ config: { max_loops: 5 }, configurable: {} }, 9)).toBe(5);
    expect(maxLoopsOf({ config: {}, configurable: {} }, 9)).toBe(9);
  });

  it('modelOf is null when the config no longer resolves or parses', () => {
    expect(modelOf(fakeJob({ configJson: JSON.stringify({ configurable: { model: 'reasoning' } }) }), registry('openai-compatible'))).toEqual({
      provider: 'openai-compatible',
      label: 'reasoning',
    });
    expect(modelOf(fakeJob({ configJson: JSON.stringify({ configurable: { model: 'bad' } }) }), registry('scripted'))).toBeNull();
    expect(modelOf(fakeJob({ configJson: '{' }), registry('scripted'))).toBeNull();
  });
});

describe('run input: graphInput', () => {
  it('a first attempt adds the messages, with the run id as context and the max_loops', async () => {
    const g = graphAt(stateWith({}));
    const input = (await graphInput(g, fakeJob({ inputJson: user('hi') }), cp, 12, 0)) as Record<string, unknown>;
    expect(g.reads).toBe(0);
    expect(input).toMatchObject({ loops: 0, max_loops: 12, finalize_reason: null, context_id: 'r1', thread_id: 'th1' });
    expect((input.messages as HumanMessage[]).map((m) => m.content)).toEqual(['hi']);
    expect(input).not.toHaveProperty('parent_context');
    expect(input).not.toHaveProperty('model_pref');
  });

  it('a retry continues the checkpoint of this very run (null), even when the checkpoint looks finished', async () => {
    expect(await graphInput(graphAt(stateWith({ context_id: 'r1' })), fakeJob({ inputJson: user('hi') }), cp, 12, 1)).toBeNull();
  });

  it("a retry whose checkpoint is another run's adds the input again", async () => {
    const input = await graphInput(graphAt(stateWith({ context_id: 'r0' })), fakeJob({ inputJson: user('hi') }), cp, 12, 2);
    expect(input).toMatchObject({ context_id: 'r1' });
  });

  it('a command resumes; a command without "resume" is refused', async () => {
    const input = await graphInput(graphAt(stateWith({})), fakeJob({ commandJson: JSON.stringify({ resume: { approved: true } }) }), cp, 12, 0);
    expect(input).toBeInstanceOf(Command);
    expect((input as unknown as Command).resume).toEqual({ approved: true });
    await expect(graphInput(graphAt(stateWith({})), fakeJob({ commandJson: '{"foo":1}' }), cp, 12, 0)).rejects.toThrow(
      'command must contain "resume", "update" or "goto"',
    );
  });

  it('a command update writes only client-writable keys, clears approvals with messages, and goto names real nodes', async () => {
    const cmd = (c: unknown) => graphInput(graphAt(stateWith({})), fakeJob({ commandJson: JSON.stringify(c) }), cp, 12, 0);
    const input = (await cmd({ update: { messages: [{ type: 'human', content: 'injected' }] }, goto: 'agent' })) as unknown as Command;
    expect(input).toBeInstanceOf(Command);
    expect(input.goto).toEqual(['agent']);
    const update = input.update as { messages: HumanMessage[]; approvals: unknown };
    expect(update.messages.map((m) => m.content)).toEqual(['injected']);
    expect(update.approvals).toEqual({});
    await expect(cmd({ update: { approvals: { call_1: { decision: 'approved' } } } })).rejects.toThrow(
      'command.update.approvals cannot be written by a client',
    );
    await expect(cmd({ update: [['run_usage', {}]] })).rejects.toThrow('command.update.run_usage cannot be written');
    await expect(cmd({ goto: 'nowhere' })).rejects.toThrow('"nowhere" is not a node of the agent graph');
    await expect(cmd({ update: { todos: [{ content: 'x', status: 'bogus' }] } })).rejects.toThrow(RunInputError);
  });

  it('no messages from the checkpoint a run was created with: replays from it (null), even when it is finished', async () => {
    const forked = { configurable: { ...cp.configurable, checkpoint_id: 'cp-1', checkpoint_ns: '' } };
    expect(await graphInput(graphAt(stateWith({})), fakeJob(), forked, 12, 0)).toBeNull();
  });

  it('no messages: continues an unfinished checkpoint, else refuses', async () => {
    expect(await graphInput(graphAt(stateWith({}, { next: ['agent'] })), fakeJob({ inputJson: '{"messages":[]}' }), cp, 12, 0)).toBeNull();
    await expect(graphInput(graphAt(stateWith({})), fakeJob(), cp, 12, 0)).rejects.toThrow(RunInputError);
  });

  it("carries input.model_pref (null clears it) and a delegated run's parent", async () => {
    const set = await graphInput(
      graphAt(stateWith({})),
      fakeJob({ inputJson: JSON.stringify({ messages: [{ role: 'user', content: 'x' }], model_pref: 'vision' }) }),
      cp,
      12,
      0,
    );
    expect(set).toMatchObject({ model_pref: 'vision' });
    const cleared = await graphInput(
      graphAt(stateWith({})),
      fakeJob({ inputJson: JSON.stringify({ messages: [{ role: 'user', content: 'x' }], model_pref: null }) }),
      cp,
      12,
      0,
    );
    expect(cleared).toMatchObject({ model_pref: null });
    const child = await graphInput(graphAt(stateWith({})), fakeJob({ inputJson: user('x'), delegation: { parentRunId: 'p1', depth: 1 } as never }), cp, 12, 0);
    expect(child).toMatchObject({ parent_context: 'p1' });
  });
});

describe('run input: delegation resume', () => {
  const resumeJob = (attempt = {}) => fakeJob({ resumeDelegationId: 'd1', commandJson: JSON.stringify({ resume: { results: [] } }), ...attempt });

  it('resumes while the run still waits on that delegation step', async () => {
    const input = await delegationResumeInput(graphAt(stateWith({ context_id: 'r1' }, { interrupts: [delegationRequest('d1')] })), resumeJob(), cp, 0);
    expect(input).toBeInstanceOf(Command);
    expect((input as unknown as Command).resume).toEqual({ results: [] });
  });

  it('a retry of a resume that got past the step continues (null); a duplicate is stale', async () => {
    const past = graphAt(stateWith({ context_id: 'r1' }));
    expect(await delegationResumeInput(past, resumeJob(), cp, 1)).toBeNull();
    expect(await delegationResumeInput(past, resumeJob(), cp, 0)).toBe('stale');
    expect(await delegationResumeInput(graphAt(stateWith({ context_id: 'r1' }, { interrupts: [delegationRequest('d0')] })), resumeJob(), cp, 0)).toBe('stale');
  });
});

describe('run input: checkpoint of a fork', () => {
  /** A graph whose latest checkpoint is `latest` and where only checkpoint `cp1` exists besides. */
  function forkable(latest: ReturnType<typeof stateWith>): StateReader & { asked: CheckpointConfig[] } {
    return {
      asked: [],
      async getState(config) {
        this.asked.push(config);
        const id = config.configurable.checkpoint_id;
        if (id === undefined) return { ...latest, createdAt: 'now' } as never;
        return (id === 'cp1' ? { ...stateWith({}, { next: ['agent'] }), createdAt: 'then' } : stateWith({})) as never;
      },
    };
  }

  it('without a checkpoint_id the run executes on the thread’s latest checkpoint', async () => {
    const g = forkable(stateWith({}));
    expect(await runCheckpointConfig(g, fakeJob(), cp, {}, 0)).toBe(cp);
    expect(g.asked).toHaveLength(0);
  });

  it('a checkpoint_id forks there (with its namespace); a missing checkpoint or a non-string id is the client’s mistake', async () => {
    const g = forkable(stateWith({}));
    expect(await runCheckpointConfig(g, fakeJob(), cp, { checkpoint_id: 'cp1' }, 0)).toEqual({
      configurable: { ...cp.configurable, checkpoint_id: 'cp1', checkpoint_ns: '' },
    });
    await expect(runCheckpointConfig(g, fakeJob(), cp, { checkpoint_id: 'nope' }, 0)).rejects.toThrow(RunInputError);
    await expect(runCheckpointConfig(g, fakeJob(), cp, { checkpoint_id: 7 }, 0)).rejects.toThrow(RunInputError);
  });

  it('a retry of a fork that already wrote checkpoints continues from its own latest one', async () => {
    expect(await runCheckpointConfig(forkable(stateWith({ context_id: 'r1' })), fakeJob(), cp, { checkpoint_id: 'cp1' }, 1)).toBe(cp);
    // A retry that wrote nothing yet forks again.
    expect(
      (await runCheckpointConfig(forkable(stateWith({ context_id: 'other' })), fakeJob(), cp, { checkpoint_id: 'cp1' }, 1)).configurable.checkpoint_id,
    ).toBe('cp1');
  });
});
