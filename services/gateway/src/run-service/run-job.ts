/** The proto RunJob the gateway enqueues for a run: everything the orchestrator needs from the run request. */
import { create, RunJobSchema, toBinary } from '@agentloop/proto';
import type { RunJobSpec, UploadRecord } from '@agentloop/store';
import type { GatewayConfig } from '../config.js';
import { nodeList, runConfig, type RunCreateBody } from '../run-schema.js';
import type { SkillsConfig } from '../skills-config.js';
import { appendToLastUserMessage, formatUploadReferences } from '../uploads.js';

export interface RunJobRequest {
  runId: string;
  threadId: string;
  tenantId: string;
  assistantId: string;
  body: RunCreateBody;
  streamModes: string[];
  /** A stateless run: its thread is temporary. */
  ephemeral: boolean;
  traceparent: string;
  apiKeyId: string;
}

export interface RunJobOptions {
  config: Pick<GatewayConfig, 'RUN_ATTEMPTS' | 'RUN_BACKOFF_MS'> & Partial<Pick<GatewayConfig, 'PROMPT_LANGUAGE'>>;
  skills: SkillsConfig;
}

/**
 * The run's queue job, built in the admission's transaction with the uploads it claims: files
 * uploaded to the thread since its last run are announced in this run's user message (seed 001 §3.3).
 */
export function buildRunJob(req: RunJobRequest, opts: RunJobOptions, uploads: UploadRecord[]): RunJobSpec {
  const { body } = req;
  const input =
    uploads.length === 0 ? body.input : appendToLastUserMessage(body.input, formatUploadReferences(uploads, opts.skills, opts.config.PROMPT_LANGUAGE ?? 'en'));
  const payload = toBinary(
    RunJobSchema,
    create(RunJobSchema, {
      runId: req.runId,
      threadId: req.threadId,
      tenantId: req.tenantId,
      assistantId: req.assistantId,
      inputJson: input === undefined || input === null ? '' : JSON.stringify(input),
      commandJson: body.command ? JSON.stringify(body.command) : '',
      configJson: JSON.stringify(runConfig(body)),
      metadataJson: JSON.stringify(body.metadata ?? {}),
      webhookUrl: body.webhook ?? '',
      streamMode: req.streamModes,
      ephemeral: req.ephemeral,
      // The orchestrator's run span joins the trace of the request that created the run.
      traceparent: req.traceparent,
      // Who submitted it, from the authenticated request (the audit trail's approver of a resume).
      apiKeyId: req.apiKeyId,
      interruptBefore: nodeList(body.interrupt_before),
      interruptAfter: nodeList(body.interrupt_after),
      streamSubgraphs: body.stream_subgraphs ?? false,
      // LangGraph's run `context` (the graph's context schema); empty when the request has none.
      contextJson: body.context === undefined || body.context === null ? '' : JSON.stringify(body.context),
    }),
  );
  const delayMs = body.after_seconds ? Math.round(body.after_seconds * 1000) : undefined;
  return { payload, attempts: opts.config.RUN_ATTEMPTS, backoffMs: opts.config.RUN_BACKOFF_MS, ...(delayMs ? { delayMs } : {}) };
}
