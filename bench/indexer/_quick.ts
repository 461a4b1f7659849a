import { DocumentIndex, buildIndexFile } from '@agentloop/indexer';
const EN = 'system data network report budget review market customer service product design process quality research model analysis result growth revenue cost policy security access storage server client request response index search document page table chart figure section chapter summary method approach value risk plan team project schedule'.split(' ');
let seed = 1; const r = () => { seed = (seed * 16807) % 2147483647; return seed / 2147483647; };
const units = Array.from({ length: 1000 }, (_, p) => ({ n: p + 1, text: Array.from({ length: 40 }, () => Array.from({ length: 12 }, () => EN[Math.floor(r() * EN.length)]).join(' ')).join('\n') }));
const idx = new DocumentIndex(buildIndexFile({ kind: 'pdf', total: 1000, units, complete: true, notes: [] }, '0'.repeat(64)));
for (const q of ['data', 'data network', 'budget review market', 'zebra']) {
  const t = performance.now(); for (let i = 0; i < 10; i++) idx.search(q, 5); console.log(q, ((performance.now() - t) / 10).toFixed(1), 'ms');
}
const q = 'budget review market';
const t0 = performance.now(); for (let i = 0; i < 20; i++) idx.search(q, 5); console.log('again', ((performance.now() - t0) / 20).toFixed(1));
