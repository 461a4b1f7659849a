/**
 * Documents end to end (embedded): a scripted agent reads and searches a PDF,
 * DOCX, XLSX, PPTX and a Chinese text in its workspace through read_file and
 * search_file (tool-runner → indexer over the bus), finds the right page for
 * a phrase and writes a report to outputs/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import { startEmbedded, type EmbeddedServer } from '@agentloop/agentloop-app';
import { buildDocx, buildPdf, buildPptx, buildXlsx } from '@agentloop/indexer/testing';
import { scripted } from './helpers.js';

type Msg = { type: string; content: string; name?: string };

describe('documents through the gateway (embedded)', () => {
  let server: EmbeddedServer;
  let dataDir: string;
  let client: Client;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'agentloop-docs-'));
    server = await startEmbedded({ env: { DATA_DIR: dataDir, LOG_LEVEL: 'warn' }, port: 0 });
    client = new Client({ apiUrl: server.url });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('reads and searches PDF, DOCX, XLSX, PPTX and Chinese text, finds the page of a phrase, and writes a report', async () => {
    const thread = await client.threads.create();
    const uploads = path.join(dataDir, 'workspaces', 'default', thread.thread_id, 'uploads');
    mkdirSync(uploads, { recursive: true });
    const pages = Array.from({ length: 12 }, (_, i) => `Quarterly review page ${i + 1}\nRoutine figures and notes.`);
    pages[8] = 'Quarterly review page 9\nThe migration to the orbital warehouse finished ahead of plan.';
    writeFileSync(path.join(uploads, 'review.pdf'), buildPdf(pages));
    writeFileSync(path.join(uploads, 'memo.docx'), buildDocx(['Memo for the board', { table: [['Item', 'Cost'], ['Servers', '1200']] }]));
    writeFileSync(path.join(uploads, 'budget.xlsx'), buildXlsx([{ name: 'Budget', rows: [['Line', 'Amount'], ['Rent', 900], ['Travel', 300]] }]));
    writeFileSync(path.join(uploads, 'deck.pptx'), buildPptx([['Kickoff'], ['Roadmap', 'Launch the lunar office in May']]));
    writeFileSync(path.join(uploads, 'notes-zh.txt'), '项目周报\n本周完成了数据库迁移工作。\n下周计划上线新的搜索功能。\n');

    const values = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'Summarize my files' }] },
      config: scripted([
        { tool_calls: [{ name: 'read_file', args: { file_path: 'uploads/memo.docx' } }, { name: 'read_file', args: { file_path: 'uploads/budget.xlsx' } }, { name: 'read_file', args: { file_path: 'uploads/deck.pptx' } }] },
        { tool_calls: [{ name: 'read_file', args: { file_path: 'uploads/review.pdf' } }] },
        { tool_calls: [{ name: 'search_file', args: { file_path: 'uploads/review.pdf', query: 'orbital warehouse' } }] },
        { tool_calls: [{ name: 'search_file', args: { file_path: 'uploads/notes-zh.txt', query: '数据库迁移' } }] },
        { tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/report.md', content: '# Report\nThe migration is on page 9.\n' } }] },
        { content: 'Report written to outputs/report.md' },
      ]),
    })) as { messages: Msg[] };
    const tools = values.messages.filter((m) => m.type === 'tool');
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
    const [pdfHit, zhHit] = byName('search_file');
    expect(pdfHit).toMatch(/page 9/i);
    expect(pdfHit).toContain('**');
    expect(zhHit).toContain('数据库迁移');
    expect(tools.every((t) => !t.content.startsWith('Error:'))).toBe(true);
    expect(readFileSync(path.join(dataDir, 'workspaces', 'default', thread.thread_id, 'outputs', 'report.md'), 'utf8')).toContain('page 9');
  });

  it('answers a broken PDF with a clear error and keeps serving', async () => {
    const thread = await client.threads.create();
    const uploads = path.join(dataDir, 'workspaces', 'default', thread.thread_id, 'uploads');
    mkdirSync(uploads, { recursive: true });
    writeFileSync(path.join(uploads, 'broken.pdf'), Buffer.from(buildPdf(['hello']).slice(0, 60)));
    writeFileSync(path.join(uploads, 'fake.pdf'), 'this is plain text pretending to be a PDF');
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
