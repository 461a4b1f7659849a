import { describe, expect, it } from 'vitest';
import { finishRun, listArtifacts } from './finish.js';
import { fakeJob, fakeRun, log, recordingEvents, recordingLifecycle } from './testing.js';

const startedAt = new Date(1_000);
const file = { name: 'a b.txt', path: 'outputs/a b.txt', size: 3, type: 'text/plain', modifiedMs: 2_000 };

function toolsListing(files: (typeof file)[] | Error, truncated = false) {
  const asked: unknown[] = [];
  return {
    asked,
    async listFiles(...args: unknown[]) {
      asked.push(args);
      if (files instanceof Error) throw files;
      return { files, truncated };
    },
  } as unknown as Parameters<typeof listArtifacts>[0]['tools'] & { asked: unknown[] };
}

describe('run finish', () => {
  it('lists the outputs since the run first started, with absolute URLs under PUBLIC_BASE_URL', async () => {
    const tools = toolsListing([file]);
    const artifacts = await listArtifacts({ tools, publicBaseUrl: 'https://x.test' }, fakeJob({ workspaceThreadId: 'ws 1' }), startedAt, log);
    expect(tools.asked[0]).toEqual(['t1', 'ws 1', { folders: ['outputs'], runId: 'r1', modifiedSinceMs: 1_000, maxFiles: 200 }]);
    expect(artifacts).toEqual([
      {
        name: 'a b.txt',
        path: 'outputs/a b.txt',
        size: 3,
        type: 'text/plain',
        modified_at: new Date(2_000).toISOString(),
        url: 'https://x.test/threads/ws%201/files/outputs/a%20b.txt',
      },
    ]);
  });

  it('a tool-runner that does not answer leaves the run without artifacts', async () => {
    expect(await listArtifacts({ tools: toolsListing(new Error('timeout')) }, fakeJob(), startedAt, log)).toEqual([]);
  });

  it('a plain success publishes no extra values and ends once with the artifacts in the values', async () => {
    const events = recordingEvents();
    const lifecycle = recordingLifecycle();
    await finishRun(
      { events, lifecycle, tools: toolsListing([]) },
      fakeJob(),
      { status: 'success', error: undefined, waitsForHuman: false },
      { loops: 1 },
      { provider: 'scripted', label: 'scripted' },
      startedAt,
      log,
    );
    expect(events.published).toEqual([]);
    expect(lifecycle.calls.map((c) => c.op)).toEqual(['end']);
    expect(lifecycle.calls[0]!.args[0]).toEqual({
      tenantId: 't1',
      runId: 'r1',
      status: 'success',
      error: undefined,
      values: { loops: 1, artifacts: [] },
      waitsForHuman: false,
      cause: 'finished',
    });
    expect(lifecycle.calls[0]!.args[1]).toMatchObject({ model: { provider: 'scripted', label: 'scripted' } });
  });

  it('publishes the final values when there are artifacts or a human is waited for, then the error', async () => {
    const events = recordingEvents();
    const error = { error: 'TimeoutError', message: 'late' };
    await finishRun(
      { events, lifecycle: recordingLifecycle(), tools: toolsListing([file]) },
      fakeJob(),
      { status: 'timeout', error, waitsForHuman: false },
      { loops: 1 },
      undefined,
      startedAt,
      log,
    );
    expect(events.published.map((e) => e.event)).toEqual(['values', 'error']);
    const waiting = recordingEvents();
    await finishRun(
      { events: waiting, lifecycle: recordingLifecycle(), tools: toolsListing([]) },
      fakeJob(),
      { status: 'success', error: undefined, waitsForHuman: true },
      { loops: 1 },
      undefined,
      startedAt,
      log,
    );
    expect(waiting.published.map((e) => e.event)).toEqual(['values']);
  });

  it('no values (the checkpoint never read): no artifact listing and null values', async () => {
    const tools = toolsListing([file]);
    const lifecycle = recordingLifecycle();
    await finishRun(
      { events: recordingEvents(), lifecycle, tools },
      fakeJob(),
      { status: 'error', error: { error: 'E', message: 'm' }, waitsForHuman: false },
      null,
      undefined,
      startedAt,
      log,
    );
    expect(tools.asked).toEqual([]);
    expect(lifecycle.calls[0]!.args[0]).toMatchObject({ values: null });
    expect(lifecycle.calls[0]!.args[1]).toMatchObject({ model: null });
  });

  it('a record that ended first (a cancel) is announced as recorded, without the error it did not record', async () => {
    const cancelled = fakeRun({ status: 'interrupted' });
    const lifecycle = recordingLifecycle(() => ({ kind: 'already_ended', run: cancelled }));
    const error = { error: 'E', message: 'm' };
    await finishRun(
      { events: recordingEvents(), lifecycle, tools: toolsListing([]) },
      fakeJob(),
      { status: 'error', error, waitsForHuman: false },
      { loops: 1 },
      undefined,
      startedAt,
      log,
    );
    expect(lifecycle.calls.map((c) => c.op)).toEqual(['end', 'replayEnd']);
    expect(lifecycle.calls[1]!.args).toEqual([cancelled, expect.anything(), { loops: 1, artifacts: [] }, undefined]);
    // Same status recorded: its error is announced.
    const same = recordingLifecycle(() => ({ kind: 'already_ended', run: fakeRun({ status: 'error' }) }));
    await finishRun(
      { events: recordingEvents(), lifecycle: same, tools: toolsListing([]) },
      fakeJob(),
      { status: 'error', error, waitsForHuman: false },
      null,
      undefined,
      startedAt,
      log,
    );
    expect(same.calls[1]!.args[3]).toBe(error);
  });
});
