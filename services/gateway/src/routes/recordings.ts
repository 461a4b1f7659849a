/**
 * Record and replay (issue 17): a run's recording as a versioned JSON document. Tenant-scoped: a
 * run of another tenant is not found; a run of the tenant that was not recorded is a 404 that says so.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { RunRecord } from '@agentloop/store';
import type { RouteContext } from '../context.js';
import { notFound } from '../errors.js';
import { recordingExport } from '../recording-export.js';
import { parseRequest, RunParams, Uuid } from '../validation.js';
import { requireRun } from './run-lookup.js';

export function registerRecordingRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { store } = ctx;

  async function exportOf(tenantId: string, run: RunRecord) {
    const events = await store.listRecordingEvents(tenantId, run.runId);
    if (!events.some((e) => e.kind !== 'replay')) {
      throw notFound(`Run ${run.runId} has no recording: runs are recorded with RECORD_RUNS=all, or with config.configurable.record: true.`);
    }
    return recordingExport(run, events);
  }

  app.get('/runs/:run_id/recording', async (request) => {
    const { run_id } = parseRequest(z.object({ run_id: Uuid }), request.params, 'params');
    const run = await store.getRun(request.tenantId, run_id);
    if (!run) throw notFound(`Run ${run_id} not found.`);
    return exportOf(request.tenantId, run);
  });

  app.get('/threads/:thread_id/runs/:run_id/recording', async (request) => {
    const { thread_id, run_id } = parseRequest(RunParams, request.params, 'params');
    return exportOf(request.tenantId, await requireRun(store, request.tenantId, thread_id, run_id));
  });
}
