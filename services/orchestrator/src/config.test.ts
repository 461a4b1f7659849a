import { describe, expect, it } from 'vitest';
import { loadOrchestratorConfig } from './config.js';

describe('orchestrator config', () => {
  it('defaults history, compaction, language and agents per the seeds', () => {
    const c = loadOrchestratorConfig({});
    expect(c.MAX_MESSAGE_HISTORY).toBe(40);
    expect(c.MESSAGE_HISTORY_STRATEGY).toBe('clean');
    expect(c.PROMPT_LANGUAGE).toBe('en');
    expect(c.COMPACT_TOKEN_BUDGET).toBe(100_000);
    expect(c.AGENT_NAMES).toEqual(['general']);
  });

  it('rejects MAX_MESSAGE_HISTORY outside 10–100', () => {
    expect(loadOrchestratorConfig({ MAX_MESSAGE_HISTORY: '10' }).MAX_MESSAGE_HISTORY).toBe(10);
    expect(loadOrchestratorConfig({ MAX_MESSAGE_HISTORY: '100' }).MAX_MESSAGE_HISTORY).toBe(100);
    expect(() => loadOrchestratorConfig({ MAX_MESSAGE_HISTORY: '9' })).toThrow(/MAX_MESSAGE_HISTORY/);
    expect(() => loadOrchestratorConfig({ MAX_MESSAGE_HISTORY: '101' })).toThrow(/MAX_MESSAGE_HISTORY/);
  });

  it('rejects an unknown strategy or language', () => {
    expect(() => loadOrchestratorConfig({ MESSAGE_HISTORY_STRATEGY: 'summary' })).toThrow(/MESSAGE_HISTORY_STRATEGY/);
    expect(() => loadOrchestratorConfig({ PROMPT_LANGUAGE: 'fr' })).toThrow(/PROMPT_LANGUAGE/);
    expect(loadOrchestratorConfig({ PROMPT_LANGUAGE: 'zh' }).PROMPT_LANGUAGE).toBe('zh');
  });

  it('accepts COMPACT_TOKEN_BUDGET=0 to disable compaction and rejects tiny budgets', () => {
    expect(loadOrchestratorConfig({ COMPACT_TOKEN_BUDGET: '0' }).COMPACT_TOKEN_BUDGET).toBe(0);
    expect(() => loadOrchestratorConfig({ COMPACT_TOKEN_BUDGET: '50' })).toThrow(/COMPACT_TOKEN_BUDGET/);
  });

  it('defaults delegation to one level (no grandchildren) and 8 parallel calls, and rejects values out of range', () => {
    const c = loadOrchestratorConfig({});
    expect([c.DELEGATION_MAX_DEPTH, c.DELEGATION_MAX_PARALLEL, c.DELEGATION_RUN_ATTEMPTS]).toEqual([1, 8, 3]);
    expect(loadOrchestratorConfig({ DELEGATION_MAX_DEPTH: '0' }).DELEGATION_MAX_DEPTH).toBe(0);
    expect(() => loadOrchestratorConfig({ DELEGATION_MAX_DEPTH: '6' })).toThrow(/DELEGATION_MAX_DEPTH/);
    expect(() => loadOrchestratorConfig({ DELEGATION_MAX_PARALLEL: '0' })).toThrow(/DELEGATION_MAX_PARALLEL/);
  });

  it('splits AGENT_NAMES on commas', () => {
    expect(loadOrchestratorConfig({ AGENT_NAMES: 'general, researcher ,' }).AGENT_NAMES).toEqual(['general', 'researcher']);
  });
});
