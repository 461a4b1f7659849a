/**
 * What an embedded run's SQLite commits write, page by page (issue 9): AgentLoop embedded as the
 * bench starts it (embedded-child.ts, `--env` applied) under `--clients` closed-loop `runs.wait`
 * clients for `--seconds`, then each of its WAL files read back: the frames since the WAL last
 * started over, the commits among them (a frame carrying the database size after it ends one), and
 * which table or index each written page belongs to (SQLite's `dbstat` table of the file as it is
 * at the end, so a page freed and reused meanwhile is named after its last owner).
 *
 * A commit in WAL mode appends every page it changed (4 KiB each), and another connection to the
 * file drops its page cache at its next read after it; so pages per commit, and which b-tree they
 * come from, say what a write costs beyond its statement — an index whose leaf pages each insert
 * lands on at random, a row spilling onto overflow pages.
 *
 *   npx tsx --conditions=@agentloop/source bench/throughput/wal-pages.ts [--clients 4] [--seconds 3] [--top 12] [--env EMBEDDED_THREADS=none]
 *
 * A warm-up of the same length runs first; the WAL may have been reset (checkpointed and started
 * over) during the counted load, so the figures are per commit, not per run.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import BetterSqlite3 from 'better-sqlite3';
import { waitLoad } from './load.js';
import { REPO_ROOT, startEmbeddedTarget } from './targets.js';

const { values: args } = parseArgs({
  options: {
    clients: { type: 'string', default: '4' },
    seconds: { type: 'string', default: '3' },
    top: { type: 'string', default: '12' },
    env: { type: 'string', multiple: true, default: [] },
  },
});
const env = Object.fromEntries(args.env.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));

interface Frame {
  pgno: number;
  commit: boolean;
}

/** The frames of the WAL's current generation (those with the header's salt): https://www.sqlite.org/fileformat2.html#walformat */
function walFrames(file: string): Frame[] {
  const buf = readFileSync(file);
  if (buf.length < 32) return [];
  const pageSize = buf.readUInt32BE(8);
  const salt1 = buf.readUInt32BE(16);
  const salt2 = buf.readUInt32BE(20);
  const frames: Frame[] = [];
  for (let at = 32; at + 24 + pageSize <= buf.length; at += 24 + pageSize) {
    if (buf.readUInt32BE(at + 8) !== salt1 || buf.readUInt32BE(at + 12) !== salt2) break;
    frames.push({ pgno: buf.readUInt32BE(at), commit: buf.readUInt32BE(at + 4) !== 0 });
  }
  return frames;
}

/** Page number → "table-or-index page-type" for every page of the database file (with its WAL applied). */
function pageOwners(dbFile: string): Map<number, string> {
  const db = new BetterSqlite3(dbFile, { readonly: true });
  try {
    const rows = db.prepare('SELECT name, pageno, pagetype FROM dbstat').all() as Array<{ name: string; pageno: number; pagetype: string }>;
    return new Map(rows.map((r) => [r.pageno, `${r.name} ${r.pagetype}`]));
  } finally {
    db.close();
  }
}

function walFiles(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walFiles(p, out);
    else if (p.endsWith('-wal')) out.push(p);
  }
  return out;
}

const outDir = mkdtempSync(path.join(os.tmpdir(), 'agentloop-wal-pages-'));
const target = await startEmbeddedTarget({ outDir, env, peerJobsPerWorker: 10, log: () => {}, agentloopRoot: REPO_ROOT });
const clients = Number(args.clients);
try {
  await waitLoad(target, { concurrency: clients, seconds: Number(args.seconds) });
  const round = await waitLoad(target, { concurrency: clients, seconds: Number(args.seconds) });
  console.log(`${round.runs} runs at ${clients} clients in ${(round.elapsedMs / 1000).toFixed(1)} s after as long a warm-up, env ${JSON.stringify(env)}`);
  const dataDir = target.dataDir;
  if (dataDir === undefined) throw new Error('the embedded target did not say where its data is');
  for (const wal of walFiles(dataDir).sort()) {
    const frames = walFrames(wal);
    const commits = frames.filter((f) => f.commit).length;
    if (commits === 0) continue;
    const owners = pageOwners(wal.slice(0, -'-wal'.length));
    const byOwner = new Map<string, number>();
    for (const f of frames) {
      const owner = owners.get(f.pgno) ?? '(a page past the end: freed or not yet there)';
      byOwner.set(owner, (byOwner.get(owner) ?? 0) + 1);
    }
    console.log(`\n${path.basename(wal)}: ${frames.length} pages written in ${commits} commits = ${(frames.length / commits).toFixed(1)} pages per commit`);
    console.log('pages  per commit  b-tree page');
    for (const [owner, n] of [...byOwner].sort((a, b) => b[1] - a[1]).slice(0, Number(args.top))) {
      console.log(`${String(n).padStart(5)}  ${(n / commits).toFixed(2).padStart(10)}  ${owner}`);
    }
  }
} finally {
  await target.stop();
  rmSync(outDir, { recursive: true, force: true });
}
