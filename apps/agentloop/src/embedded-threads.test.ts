import { describe, expect, it } from 'vitest';
import { AUTO_MAX_ORCHESTRATOR_THREADS, embeddedThreads, usableCores } from './embedded-threads.js';

describe('EMBEDDED_THREADS', () => {
  it('defaults to auto: one thread per core from two cores, none on one', () => {
    expect(embeddedThreads({}, 1)).toBe(0);
    expect(embeddedThreads({}, 2)).toBe(2);
    expect(embeddedThreads({}, 8)).toBe(AUTO_MAX_ORCHESTRATOR_THREADS);
    expect(embeddedThreads({ EMBEDDED_THREADS: '' }, 3)).toBe(3);
    expect(embeddedThreads({ EMBEDDED_THREADS: ' ' }, 2)).toBe(2);
  });

  it('auto: no thread on one core, one per core from two cores, at most AUTO_MAX_ORCHESTRATOR_THREADS', () => {
    expect(embeddedThreads({ EMBEDDED_THREADS: 'auto' }, 1)).toBe(0);
    expect(embeddedThreads({ EMBEDDED_THREADS: 'auto' }, 2)).toBe(2);
    expect(embeddedThreads({ EMBEDDED_THREADS: 'auto' }, 3)).toBe(3);
    expect(embeddedThreads({ EMBEDDED_THREADS: ' auto ' }, 64)).toBe(AUTO_MAX_ORCHESTRATOR_THREADS);
  });

  it("auto counts the cores a container's CPU quota lets the process use, not the node's", () => {
    expect(usableCores(16, undefined)).toBe(16);
    expect(usableCores(16, 2)).toBe(2);
    expect(usableCores(16, 1.5)).toBe(1);
    expect(usableCores(16, 0.25)).toBe(1);
    expect(usableCores(2, 8)).toBe(2);
    expect(embeddedThreads({ EMBEDDED_THREADS: 'auto' }, usableCores(16, 1))).toBe(0);
    expect(embeddedThreads({ EMBEDDED_THREADS: 'auto' }, usableCores(16, 3))).toBe(3);
  });

  it('takes an explicit choice whatever the cores', () => {
    expect(embeddedThreads({ EMBEDDED_THREADS: 'none' }, 8)).toBe(0);
    expect(embeddedThreads({ EMBEDDED_THREADS: 'orchestrator' }, 1)).toBe(1);
    expect(embeddedThreads({ EMBEDDED_THREADS: 'orchestrator:16' }, 2)).toBe(16);
  });

  it.each(['gateway', 'orchestrator:0', 'orchestrator:17', 'orchestrator:-1', 'orchestrator:2.5', 'AUTO', 'orchestrator: 2'])('rejects %j', (value) => {
    expect(() => embeddedThreads({ EMBEDDED_THREADS: value }, 2)).toThrow(/EMBEDDED_THREADS must be "auto", "none"/);
  });
});
