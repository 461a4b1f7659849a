/** Test harnesses for code that talks to the gateway (subpath `@agentloop/gateway/testing`). */
export { startFakeOrchestrator, type FakeOrchestrator, type FakeOrchestratorOptions } from './fake-orchestrator.js';
export { startTestGateway, type TestGateway, type TestGatewayOptions } from './harness.js';
export { parseSse, latch, until, type ParsedSseEvent } from './helpers.js';
