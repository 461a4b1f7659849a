/**
 * `npm run start:cluster`: every service as its own OS process over NATS
 * (JetStream), Redis and MySQL/MariaDB. URLs come from NATS_URL, REDIS_URL and
 * MYSQL_URL; a missing one is served by a local server started here when its
 * binary is installed. A crashed service is restarted with backoff.
 */
import path from 'node:path';
import { startMariaDb, startNats, startRedis, type DevServer } from '@agentloop/devservers';
import { SERVICES, startService, type ServiceName, type ServiceProcess } from './supervisor.js';
import { DEFAULT_SKILLS_ROOT } from '@agentloop/skill-sandbox';
import { launcherDefaults } from './defaults.js';

const env = { ...process.env };
const started: DevServer[] = [];
const dataDir = path.resolve(env.DATA_DIR ?? './data');

async function ensure(name: string, key: 'NATS_URL' | 'REDIS_URL' | 'MYSQL_URL', start: () => Promise<DevServer>) {
  if (env[key]) return;
  try {
    const s = await start();
    started.push(s);
    env[key] = s.url;
    console.log(`[cluster] started local ${name} at ${s.url}`);
  } catch (err) {
    console.error(`[cluster] ${key} is not set and a local ${name} could not be started: ${(err as Error).message}`);
    process.exit(1);
  }
}

await ensure('nats-server', 'NATS_URL', () => startNats({ jetstream: true }));
await ensure('redis-server', 'REDIS_URL', () => startRedis());
await ensure('mariadb', 'MYSQL_URL', () => startMariaDb());
env.WORKSPACE_ROOT ??= path.join(dataDir, 'workspaces');
env.SKILLS_ROOT ??= DEFAULT_SKILLS_ROOT;
// Without API keys: the offline demo's scripted model (no loopback webhooks: a cluster allows no
// internal address unless configured); with them, per-tenant caps (defaults.ts).
for (const [k, v] of Object.entries(launcherDefaults(env, { loopbackWebhooks: false }))) env[k] ??= v;

const replicas: Record<ServiceName, number> = {
  'tool-runner': Number(env.TOOL_RUNNER_REPLICAS ?? 1),
  indexer: Number(env.INDEXER_REPLICAS ?? 1),
  approval: Number(env.APPROVAL_REPLICAS ?? 1),
  'skill-sandbox': Number(env.SKILL_SANDBOX_REPLICAS ?? 1),
  'mcp-broker': Number(env.MCP_BROKER_REPLICAS ?? 1),
  orchestrator: Number(env.ORCHESTRATOR_REPLICAS ?? 1),
  gateway: 1,
};
const procs = new Map<string, ServiceProcess>();
let stopping = false;

function launch(name: ServiceName, instance: number, attempt = 0) {
  const p = startService(name, { env, instance });
  procs.set(`${name}#${instance}`, p);
  void p.exited.then((code) => {
    if (stopping) return;
    const delay = Math.min(30_000, 500 * 2 ** attempt);
    console.error(`[cluster] ${name}#${instance} exited (${code}); restarting in ${delay} ms`);
    setTimeout(() => launch(name, instance, attempt + 1), delay);
  });
}

for (const name of SERVICES) for (let i = 1; i <= replicas[name]; i++) launch(name, i);
console.log(`[cluster] gateway on http://localhost:${env.PORT ?? 2024}`);

async function shutdown() {
  if (stopping) return;
  stopping = true;
  // Gateway first (stop accepting), then workers, then tools.
  for (const name of ['gateway', 'orchestrator', 'tool-runner', 'indexer', 'approval', 'skill-sandbox', 'mcp-broker'] as const) {
    await Promise.all([...procs.values()].filter((p) => p.name === name).map((p) => p.kill('SIGTERM')));
  }
  await Promise.all(started.map((s) => s.stop()));
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown());
process.on('SIGINT', () => void shutdown());
