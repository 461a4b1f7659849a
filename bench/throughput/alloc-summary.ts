/**
 * Bytes allocated per run, from a sampling heap profile (`embedded-cost.ts --alloc-profile FILE`):
 * by package, and by allocating function, each with what its own frame allocated (self) — the
 * garbage the scavenger sweeps (issue 9: the collector's share of a run's CPU). Sampled, so small
 * figures are estimates: V8 records one allocation per `samplingInterval` bytes on average and
 * scales it back up.
 *
 *   npx tsx bench/throughput/alloc-summary.ts FILE --runs N [--top 30]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { fileOf, packageOf, type CallFrame } from './profile-summary.js';

interface AllocationNode {
  callFrame: CallFrame;
  selfSize: number;
  id: number;
  children: AllocationNode[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { runs: { type: 'string', default: '1' }, top: { type: 'string', default: '30' } },
});
const profile = JSON.parse(readFileSync(positionals[0]!, 'utf8')) as { head: AllocationNode; samples: Array<{ size: number; nodeId: number }> };
const runs = Number(values.runs);

// Sampled sizes by node: the samples list carries each sampled allocation's size, by the node that made it.
const sampled = new Map<number, number>();
for (const s of profile.samples) sampled.set(s.nodeId, (sampled.get(s.nodeId) ?? 0) + s.size);

const byPackage = new Map<string, number>();
const byFunction = new Map<string, number>();
/** A builtin's allocations (String.prototype.replace, Object.entries, a Promise …) by the JavaScript function that called it. */
const byBuiltinCaller = new Map<string, number>();
let total = 0;
const nameOf = (f: CallFrame): string => `${fileOf(f.url)}:${f.functionName || '(anonymous)'}`;
const walk = (node: AllocationNode, caller?: CallFrame): void => {
  const bytes = sampled.get(node.id) ?? node.selfSize;
  if (bytes > 0) {
    total += bytes;
    const pkg = packageOf(node.callFrame);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + bytes);
    const fn = nameOf(node.callFrame);
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + bytes);
    if (node.callFrame.url === '' && caller) {
      const key = `${node.callFrame.functionName || '(anonymous)'} ← ${nameOf(caller)}`;
      byBuiltinCaller.set(key, (byBuiltinCaller.get(key) ?? 0) + bytes);
    }
  }
  for (const c of node.children) walk(c, node.callFrame.url === '' ? caller : node.callFrame);
};
walk(profile.head);

const kb = (b: number): string => (b / 1024 / runs).toFixed(1).padStart(9);
console.log(`${(total / 1024 / 1024).toFixed(1)} MiB sampled over ${runs} runs = ${kb(total).trim()} KiB per run\n\nKiB per run  package`);
for (const [k, b] of [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top))) console.log(`${kb(b)}    ${k}`);
console.log('\nKiB per run  allocating function (self)');
for (const [k, b] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top))) console.log(`${kb(b)}    ${k}`);
console.log('\nKiB per run  builtin ← the JavaScript function calling it');
for (const [k, b] of [...byBuiltinCaller].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top))) console.log(`${kb(b)}    ${k}`);
