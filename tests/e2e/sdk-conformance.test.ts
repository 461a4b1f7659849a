/**
 * Issue 11's acceptance test for the official SDK: every method of `client.assistants`,
 * `client.threads` and `client.runs` and every stream mode, each its own check named
 * "<client>.<method> <what>", asserting LangGraph Platform's behaviour and payloads — against
 * AgentLoop embedded and as a cluster (gateway, orchestrator, tool-runner and approval processes over
 * NATS, Redis and MariaDB), one server per mode. The scripted model keeps every run deterministic.
 */
import { describe } from 'vitest';
import { MODES, useTarget } from './sdk-harness.js';
import { assistantsTests } from './sdk-conformance-assistants.js';
import { threadsTests } from './sdk-conformance-threads.js';
import { runsTests } from './sdk-conformance-runs.js';
import { streamsTests } from './sdk-conformance-streams.js';

describe.each(MODES)('the LangGraph SDK against AgentLoop (%s)', (mode) => {
  const target = useTarget(mode, 'agentloop-sdk-conformance-');
  describe('client.assistants', () => assistantsTests(target));
  describe('client.threads', () => threadsTests(target));
  describe('client.runs', () => runsTests(target));
  describe('client.runs.stream modes', () => streamsTests(target));
});
