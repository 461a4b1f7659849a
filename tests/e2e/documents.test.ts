/**
 * Documents end to end, through the HTTP API only: files are uploaded with
 * `POST /threads/{id}/files`, a scripted agent reads and searches the PDF,
 * DOCX, XLSX, PPTX and the Chinese documents (tool-runner → indexer over the
 * bus), finds the page of a phrase and writes a report to outputs/; the run's
 * webhook lists the report as an artifact whose URL downloads it. Runs
 * embedded (one process) and as a cluster (gateway, tool-runner, indexer and
 * orchestrator as separate processes sharing the workspace volume, over real
 * NATS, Redis and MariaDB).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import { startEmbedded, type EmbeddedServer } from '@agentloop/agentloop-app';
import { buildDocx, buildPdf, buildPptx, buildXlsx } from '@agentloop/indexer/testing';
import { scripted, startCluster, startWebhookReceiver, type ClusterHarness } from './helpers.js';
import { EMBEDDED_TEST_THREADS } from './test-threads.js';

type Msg = { type: string; content: string; name?: string };
interface Artifact {
  name: string;
  path: string;
  size: number;
  type: string;
  url: string;
}

/** Uploads files to a thread through the API (multipart/form-data). */
async function uploadFiles(
  baseUrl: string,
  threadId: string,
  files: Record<string, Uint8Array | string>,
): Promise<{ name: string; path: string; type: string; warning?: string }[]> {
  const form = new FormData();
  for (const [name, data] of Object.entries(files)) form.append('file', new Blob([typeof data === 'string' ? data : Buffer.from(data)]), name);
  const res = await fetch(`${baseUrl}/threads/${threadId}/files`, { method: 'POST', body: form });
  expect(res.status).toBe(201);
  return ((await res.json()) as { files: { name: string; path: string; type: string; warning?: string }[] }).files;
}

const pages = Array.from({ length: 12 }, (_, i) => `Quarterly review page ${i + 1}\nRoutine figures and notes.`);
pages[8] = 'Quarterly review page 9\nThe migration to the orbital warehouse finished ahead of plan.';

const REPORT = '# Report\nThe orbital warehouse migration is on page 9 of review.pdf.\n';

/** The whole journey against a running deployment at `baseUrl`. */
async function documentJourney(baseUrl: string): Promise<void> {
  const client = new Client({ apiUrl: baseUrl });
  const hook = await startWebhookReceiver();
  try {
    const thread = await client.threads.create();
    const uploaded = await uploadFiles(baseUrl, thread.thread_id, {
      'review.pdf': buildPdf(pages),
      'memo.docx': buildDocx([
        'Memo for the board',
        {
          table: [
            ['Item', 'Cost'],
            ['Servers', '1200'],
          ],
        },
      ]),
      'budget.xlsx': buildXlsx([
        {
          name: 'Budget',
          rows: [
            ['Line', 'Amount'],
            ['Rent', 900],
            ['Travel', 300],
          ],
        },
      ]),
      'deck.pptx': buildPptx([['Kickoff'], ['Roadmap', 'Launch the lunar office in May']]),
      '周报.docx': buildDocx(['项目周报', '本周完成了数据库迁移工作。', '下周计划上线新的搜索功能。']),
      'notes-zh.txt': '会议纪要\n讨论了数据库迁移的风险。\n',
    });
    expect(uploaded.map((u) => [u.path, u.type])).toEqual([
      ['uploads/review.pdf', 'pdf'],
      ['uploads/memo.docx', 'document'],
      ['uploads/budget.xlsx', 'spreadsheet'],
      ['uploads/deck.pptx', 'presentation'],
      ['uploads/周报.docx', 'document'],
      ['uploads/notes-zh.txt', 'text'],
    ]);

    const run = await client.runs.create(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'Summarize my files' }] },
      webhook: hook.url,
      config: scripted([
        {
          tool_calls: [
            { name: 'read_file', args: { file_path: 'uploads/memo.docx' } },
            { name: 'read_file', args: { file_path: 'uploads/budget.xlsx' } },
            { name: 'read_file', args: { file_path: 'uploads/deck.pptx' } },
          ],
        },
        { tool_calls: [{ name: 'read_file', args: { file_path: 'uploads/review.pdf' } }] },
        { tool_calls: [{ name: 'search_file', args: { file_path: 'uploads/review.pdf', query: 'orbital warehouse' } }] },
        {
          tool_calls: [
            { name: 'search_file', args: { file_path: 'uploads/周报.docx', query: '数据库迁移' } },
            { name: 'search_file', args: { file_path: 'uploads/notes-zh.txt', query: '数据库迁移' } },
          ],
        },
        { tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/report.md', content: REPORT } }] },
        { content: 'Report written to outputs/report.md' },
      ]),
    });
    await hook.waitFor(1, 90_000);
    const delivery = hook.deliveries[0]!.json as { run_id: string; status: string; values: { messages: Msg[]; artifacts: Artifact[] } };
    expect(delivery).toMatchObject({ run_id: run.run_id, status: 'success' });
    const { messages, artifacts } = delivery.values;

    // The uploads were announced in the user's message (seed 001 §3.3), with skill hints.
    const human = messages.find((m) => m.type === 'human')!.content;
    expect(human).toContain('Summarize my files\n\nUploaded files:\n- review.pdf → uploads/review.pdf (pdf, ');
    expect(human).toMatch(/- memo\.docx → uploads\/memo\.docx \(document, \d+ bytes\) \[use @docx\]/);

    const tools = messages.filter((m) => m.type === 'tool');
    const byName = (n: string) => tools.filter((t) => t.name === n).map((t) => t.content);
    const [docx, xlsx, pptx, pdf] = byName('read_file');
    expect(docx).toContain('Memo for the board');
    expect(docx).toMatch(/Servers.*1200/);
    expect(xlsx).toMatch(/Rent.*900/);
    expect(pptx).toContain('Launch the lunar office in May');
    // 12 pages: a preview of the first 10 with a hint to search.
    expect(pdf).toContain('Quarterly review page 1');
    expect(pdf).not.toContain('Quarterly review page 11');
    expect(pdf).toMatch(/search_file/);
    const [pdfHit, zhDocHit, zhTxtHit] = byName('search_file');
    expect(pdfHit).toMatch(/page 9/i);
    expect(pdfHit).toContain('**');
    expect(zhDocHit).toContain('数据库迁移');
    expect(zhTxtHit).toContain('数据库迁移');
    expect(tools.every((t) => !t.content.startsWith('Error:'))).toBe(true);

    // The report is the run's artifact, and its URL downloads it.
    expect(artifacts).toEqual([
      expect.objectContaining({
        name: 'report.md',
        path: 'outputs/report.md',
        size: Buffer.byteLength(REPORT),
        type: 'markdown',
        url: `/threads/${thread.thread_id}/files/outputs/report.md`,
      }),
    ]);
    const download = await fetch(new URL(artifacts[0]!.url, baseUrl));
    expect(download.status).toBe(200);
    expect(download.headers.get('content-disposition')).toContain('attachment');
    expect(await download.text()).toBe(REPORT);

    // The thread's file list shows uploads and outputs; its state carries the artifacts too.
    const list = (await (await fetch(`${baseUrl}/threads/${thread.thread_id}/files`)).json()) as { files: { path: string }[] };
    expect(list.files.map((f) => f.path)).toContain('outputs/report.md');
    expect(list.files.filter((f) => f.path.startsWith('uploads/'))).toHaveLength(6);
    const state = (await client.threads.getState(thread.thread_id)).values as { artifacts?: Artifact[] };
    expect(state.artifacts?.map((a) => a.path)).toEqual(['outputs/report.md']);

    // A second run on the thread neither re-announces the uploads nor re-reports the old report.
    const again = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'Thanks' }] },
      config: scripted([{ content: 'You are welcome' }]),
    })) as { messages: Msg[]; artifacts: Artifact[] };
    expect(again.messages.filter((m) => m.type === 'human').at(-1)!.content).toBe('Thanks');
    expect(again.artifacts).toEqual([]);
  } finally {
    await hook.close();
  }
}

describe('documents through the gateway (embedded)', () => {
  let server: EmbeddedServer;
  let dataDir: string;
  let client: Client;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'agentloop-docs-'));
    server = await startEmbedded({
      env: { DATA_DIR: dataDir, EMBEDDED_THREADS: EMBEDDED_TEST_THREADS, LOG_LEVEL: 'warn', WEBHOOK_ALLOW: '127.0.0.1' },
      port: 0,
    });
    client = new Client({ apiUrl: server.url });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('uploads, reads and searches PDF, DOCX, XLSX, PPTX and Chinese documents, and the webhook lists the report with a working URL', async () => {
    await documentJourney(server.url);
  });

  it('answers a broken PDF with a clear error and keeps serving', async () => {
    const thread = await client.threads.create();
    const uploaded = await uploadFiles(server.url, thread.thread_id, {
      'broken.pdf': buildPdf(['hello']).slice(0, 60),
      'fake.pdf': 'this is plain text pretending to be a PDF',
    });
    expect(uploaded[1]).toMatchObject({ type: 'text', warning: 'named ".pdf" but the content is not PDF (it is plain text)' });
    const values = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'read them' }] },
      config: scripted([
        { tool_calls: [{ name: 'read_file', args: { file_path: 'uploads/broken.pdf' } }] },
        { tool_calls: [{ name: 'read_file', args: { file_path: 'uploads/fake.pdf' } }] },
        { content: 'done' },
      ]),
    })) as { messages: Msg[] };
    const [broken, fake] = values.messages.filter((m) => m.type === 'tool').map((m) => m.content);
    expect(broken).toMatch(/^Error:/);
    expect(fake).toBeDefined();
    expect(values.messages.at(-1)!.content).toBe('done');
  });
});

describe('documents through the gateway (cluster: separate processes, shared workspace volume)', () => {
  let cluster: ClusterHarness;

  beforeAll(async () => {
    cluster = await startCluster({ env: { WEBHOOK_ALLOW: '127.0.0.1' } });
    cluster.start('indexer', 1);
    await cluster.waitLog(/indexer serving/, 0, 90_000);
  }, 240_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('uploads, reads and searches PDF, DOCX, XLSX, PPTX and Chinese documents, and the webhook lists the report with a working URL', async () => {
    await documentJourney(cluster.url);
  }, 180_000);
});
