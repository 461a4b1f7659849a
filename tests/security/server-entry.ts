/**
 * The attacked server of the security suite: AgentLoop embedded, in its own OS process, so a freeze
 * cannot freeze the test runner, its RSS can be sampled and SIGTERM is observable. Configured by
 * the environment only (the harness builds it from scratch). Prints one `AGENTLOOP_READY {json}`
 * line on stdout once it listens.
 */
import { startEmbedded } from '@agentloop/agentloop-app';

const server = await startEmbedded({ port: Number(process.env.PORT ?? 0) });
process.stdout.write(`AGENTLOOP_READY ${JSON.stringify({ url: server.url, grpcPort: server.grpcPort ?? null })}\n`);

let stopping = false;
const stop = (): void => {
  if (stopping) return;
  stopping = true;
  server.close().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`close failed: ${String(err)}\n`);
      process.exit(1);
    },
  );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

// Test hook of the security suite (the harness starts this process with --expose-gc): on SIGUSR2,
// collect garbage and report what stays alive, so memory retained by the server can be told apart
// from garbage the heap has not given back to the OS yet.
process.on('SIGUSR2', () => {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  process.stdout.write(
    `AGENTLOOP_HEAP ${JSON.stringify({ gc: gc !== undefined, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers, rss: m.rss })}\n`,
  );
});
