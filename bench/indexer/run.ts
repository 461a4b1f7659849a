/**
 * Indexer benchmark: index build throughput and search latency.
 *
 *   npx tsx --conditions=@agentloop/source bench/indexer/run.ts
 *
 * 1. A generated 1,000-page PDF, end to end through the service on a
 *    MemoryBus: first search (extraction in the worker + chunking +
 *    tokenizing + writing the index), then searches on the loaded index.
 * 2. A generated 5 MB Chinese text: index build in-process (Intl.Segmenter
 *    word segmentation, pages of 3,000 characters) and search latency; plus
 *    the live scan search_file uses for text files, through the service.
 *
 * Figures are printed, nothing is asserted. Inputs are deterministic.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MemoryBus } from '@agentloop/bus';
import { silentLogger } from '@agentloop/core';
import { DocumentIndex, buildIndexFile, createIndexer, extractDocument, loadIndexerConfig, INDEXER_SUBJECTS, type Extraction } from '@agentloop/indexer';
import { buildPdf } from '@agentloop/indexer/testing';
import { create, fromBinary, toBinary, SearchDocumentRequestSchema, SearchDocumentResponseSchema } from '@agentloop/proto';

/** Small deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const EN = (
  'system data network report budget review market customer service product design process quality research model ' +
  'analysis result growth revenue cost policy security access storage server client request response index search ' +
  'document page table chart figure section chapter summary method approach value risk plan team project schedule'
).split(' ');
const ZH = (
  '机器 学习 人工 智能 数据 分析 模型 训练 市场 营销 策略 客户 服务 产品 设计 质量 研究 结果 增长 收入 成本 政策 ' +
  '安全 网络 系统 存储 服务器 请求 响应 索引 搜索 文档 页面 表格 图表 章节 总结 方法 风险 计划 团队 项目 进度 医疗 领域 应用 发展 技术'
).split(' ');

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

function latencies(label: string, samples: number[]): void {
  const s = [...samples].sort((a, b) => a - b);
  console.log(`  ${label}: n=${s.length}  p50=${percentile(s, 50).toFixed(2)} ms  p99=${percentile(s, 99).toFixed(2)} ms`);
}

function queries(words: string[], n: number, rand: () => number, joiner: string): string[] {
  return Array.from({ length: n }, () => {
    const k = 1 + Math.floor(rand() * 3);
    return Array.from({ length: k }, () => words[Math.floor(rand() * words.length)]).join(joiner);
  });
}

async function benchPdf(tmp: string): Promise<void> {
  const rand = rng(1);
  const pages = Array.from(
    { length: 1000 },
    (_, p) => Array.from({ length: 40 }, () => Array.from({ length: 12 }, () => EN[Math.floor(rand() * EN.length)]).join(' ')).join('\n') + `\nmarker-${p + 1}`,
  );
  const pdf = buildPdf(pages);
  console.log(`\n1,000-page PDF: ${(pdf.length / 1024 / 1024).toFixed(1)} MB file`);

  // Extraction alone, in-process, to count the text.
  const limits = {
    maxUnits: {},
    maxChars: 100_000_000,
    zip: { maxTotalBytes: 1 << 28, maxEntryBytes: 1 << 27, maxEntries: 1000 },
    xlsxMaxCells: 1,
    xlsxMaxRows: 1,
  };
  let t = performance.now();
  const ex = await extractDocument(pdf.slice(), 'pdf', 'pdf', limits);
  const extractMs = performance.now() - t;
  const textMb = ex.units.reduce((n, u) => n + Buffer.byteLength(u.text), 0) / 1024 / 1024;
  t = performance.now();
  const file = buildIndexFile(ex, '0'.repeat(64));
  const indexMs = performance.now() - t;
  console.log(`  extracted text: ${textMb.toFixed(2)} MB in ${ex.units.length} pages`);
  console.log(
    `  in-process: extraction ${(extractMs / 1000).toFixed(2)} s (${(textMb / (extractMs / 1000)).toFixed(2)} MB/s), chunk+tokenize ${(indexMs / 1000).toFixed(2)} s (${(textMb / (indexMs / 1000)).toFixed(2)} MB/s), ${file.chunks.length} chunks`,
  );

  // End to end through the service.
  const root = path.join(tmp, 'workspaces');
  await fs.mkdir(path.join(root, 'bench', 'thread', 'uploads'), { recursive: true });
  await fs.writeFile(path.join(root, 'bench', 'thread', 'uploads', 'big.pdf'), pdf);
  const bus = new MemoryBus();
  const client = bus.peer();
  const indexer = createIndexer({ bus, logger: silentLogger(), config: loadIndexerConfig({ WORKSPACE_ROOT: root }) });
  await indexer.start();
  const search = async (query: string) => {
    const req = create(SearchDocumentRequestSchema, { tenantId: 'bench', threadId: 'thread', path: 'uploads/big.pdf', query, maxResults: 5 });
    const reply = await client.request(INDEXER_SUBJECTS.search, toBinary(SearchDocumentRequestSchema, req), { timeoutMs: 300_000 });
    const res = fromBinary(SearchDocumentResponseSchema, reply.data);
    if (res.error) throw new Error(res.error.message);
    return res;
  };
  try {
    t = performance.now();
    const first = await search('marker-777');
    const firstMs = performance.now() - t;
    console.log(
      `  service, first search (worker extraction + index build + write): ${(firstMs / 1000).toFixed(2)} s ` +
        `→ ${(textMb / (firstMs / 1000)).toFixed(2)} MB of text/s; index_built=${first.indexBuilt}, top page=${first.matches[0]?.page}`,
    );
    const qs = queries(EN, 200, rng(2), ' ');
    const samples: number[] = [];
    for (const q of qs) {
      const s = performance.now();
      await search(q);
      samples.push(performance.now() - s);
    }
    latencies('service search on the built index (request over MemoryBus, protobuf, stat + hash cache)', samples);
    const idx = new DocumentIndex(file);
    const direct: number[] = [];
    for (const q of qs) {
      const s = performance.now();
      idx.search(q, 5);
      direct.push(performance.now() - s);
    }
    latencies('DocumentIndex.search alone', direct);
  } finally {
    await indexer.stop();
    await client.close();
    await bus.close();
  }
}

async function benchChinese(tmp: string): Promise<void> {
  const rand = rng(3);
  const parts: string[] = [];
  let bytes = 0;
  while (bytes < 5 * 1024 * 1024) {
    const n = 6 + Math.floor(rand() * 10);
    let sentence = '';
    for (let i = 0; i < n; i++) sentence += ZH[Math.floor(rand() * ZH.length)];
    sentence += rand() < 0.2 ? '。\n' : '，';
    parts.push(sentence);
    bytes += Buffer.byteLength(sentence);
  }
  const text = parts.join('');
  const mb = Buffer.byteLength(text) / 1024 / 1024;
  console.log(`\n5 MB Chinese text: ${mb.toFixed(2)} MB, ${text.length.toLocaleString('en-US')} characters`);

  const pages: Extraction['units'] = [];
  for (let i = 0; i * 3000 < text.length; i++) pages.push({ n: i + 1, text: text.slice(i * 3000, (i + 1) * 3000) });
  let t = performance.now();
  const file = buildIndexFile({ kind: 'docx', total: pages.length, units: pages, complete: true, notes: [] }, '1'.repeat(64));
  const buildMs = performance.now() - t;
  t = performance.now();
  const idx = new DocumentIndex(file);
  const loadMs = performance.now() - t;
  console.log(
    `  index build (chunk + Intl.Segmenter tokenize): ${(buildMs / 1000).toFixed(2)} s → ${(mb / (buildMs / 1000)).toFixed(2)} MB/s; ` +
      `${file.chunks.length} chunks; load (inverted index) ${loadMs.toFixed(0)} ms`,
  );
  const qs = queries(ZH, 300, rng(4), '');
  const samples: number[] = [];
  for (const q of qs) {
    const s = performance.now();
    idx.search(q, 5);
    samples.push(performance.now() - s);
  }
  latencies('DocumentIndex.search', samples);

  // Live scan (what search_file does for a .txt), through the service.
  const root = path.join(tmp, 'workspaces');
  await fs.mkdir(path.join(root, 'bench', 'zh', 'uploads'), { recursive: true });
  await fs.writeFile(path.join(root, 'bench', 'zh', 'uploads', 'zh.txt'), text);
  const bus = new MemoryBus();
  const client = bus.peer();
  const indexer = createIndexer({ bus, logger: silentLogger(), config: loadIndexerConfig({ WORKSPACE_ROOT: root }) });
  await indexer.start();
  try {
    const live: number[] = [];
    for (const q of qs.slice(0, 10)) {
      const req = create(SearchDocumentRequestSchema, { tenantId: 'bench', threadId: 'zh', path: 'uploads/zh.txt', query: q, maxResults: 5 });
      const s = performance.now();
      const reply = await client.request(INDEXER_SUBJECTS.search, toBinary(SearchDocumentRequestSchema, req), { timeoutMs: 120_000 });
      live.push(performance.now() - s);
      const res = fromBinary(SearchDocumentResponseSchema, reply.data);
      if (res.error) throw new Error(res.error.message);
    }
    latencies('service live scan of the .txt (search_file on a text file)', live);
  } finally {
    await indexer.stop();
    await client.close();
    await bus.close();
  }
}

const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'indexer-bench-'));
try {
  console.log(`indexer benchmark — node ${process.version}, ${os.cpus().length} CPUs`);
  await benchPdf(tmp);
  await benchChinese(tmp);
} finally {
  await fs.rm(tmp, { recursive: true, force: true });
}
