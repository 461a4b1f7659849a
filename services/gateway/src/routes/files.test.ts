import http from 'node:http';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildDocx, buildPdf } from '@agentloop/indexer/testing';
import { startTestGateway, type TestGateway } from '../testing/index.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

interface Part {
  name: string;
  data: Uint8Array | string;
  field?: string;
}

/** A multipart/form-data body as a browser would send it. */
async function multipart(parts: readonly Part[], fields: Record<string, string> = {}): Promise<{ body: Buffer; contentType: string }> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  for (const p of parts) form.append(p.field ?? 'file', new Blob([typeof p.data === 'string' ? p.data : Buffer.from(p.data)]), p.name);
  const res = new Response(form);
  return { body: Buffer.from(await res.arrayBuffer()), contentType: res.headers.get('content-type') ?? '' };
}

async function newThread(g: TestGateway, headers: Record<string, string> = {}): Promise<string> {
  const res = await g.app.inject({ method: 'POST', url: '/threads', payload: {}, headers });
  expect(res.statusCode).toBe(200);
  return (res.json() as { thread_id: string }).thread_id;
}

async function upload(g: TestGateway, threadId: string, parts: readonly Part[], headers: Record<string, string> = {}) {
  const { body, contentType } = await multipart(parts);
  return g.app.inject({ method: 'POST', url: `/threads/${threadId}/files`, payload: body, headers: { 'content-type': contentType, ...headers } });
}

const uploadsDir = (g: TestGateway, threadId: string, tenant = 'default') => path.join(g.config.WORKSPACE_ROOT, tenant, threadId, 'uploads');

describe('POST /threads/{id}/files', () => {
  it('stores several files in uploads/, detects their kinds and lists them', async () => {
    gw = await startTestGateway({ orchestrator: false });
    const threadId = await newThread(gw);
    const pdf = buildPdf(['first page', 'second page']);
    const docx = buildDocx(['Hello from a document']);
    const res = await upload(gw, threadId, [
      { name: 'report.pdf', data: pdf },
      { name: 'notes.docx', data: docx },
      { name: '季度数据.csv', data: 'a,b\n1,2\n' },
    ]);
    expect(res.statusCode).toBe(201);
    const files = (res.json() as { files: Record<string, unknown>[] }).files;
    expect(files.map((f) => [f.name, f.path, f.type, f.size])).toEqual([
      ['report.pdf', 'uploads/report.pdf', 'pdf', pdf.length],
      ['notes.docx', 'uploads/notes.docx', 'document', docx.length],
      ['季度数据.csv', 'uploads/季度数据.csv', 'csv', 8],
    ]);
    expect(files[0]?.url).toBe(`/threads/${threadId}/files/uploads/report.pdf`);
    expect(files.every((f) => f.warning === undefined)).toBe(true);
    expect(Buffer.compare(await readFile(path.join(uploadsDir(gw, threadId), 'report.pdf')), Buffer.from(pdf))).toBe(0);

    const list = await gw.app.inject({ method: 'GET', url: `/threads/${threadId}/files` });
    expect(list.statusCode).toBe(200);
    expect((list.json() as { files: { path: string }[] }).files.map((f) => f.path)).toEqual([
      'uploads/notes.docx',
      'uploads/report.pdf',
      'uploads/季度数据.csv',
    ]);
  });

  it('keeps client-supplied names inside uploads/ (traversal and hidden names are neutralized)', async () => {
    gw = await startTestGateway({ orchestrator: false });
    const threadId = await newThread(gw);
    const res = await upload(gw, threadId, [
      { name: '../../../../escape.txt', data: 'x' },
      { name: '..\\..\\win.ini', data: 'y' },
      { name: '.metadata.json', data: 'z' },
      { name: 'dup.txt', data: '1' },
      { name: 'dup.txt', data: '2' },
    ]);
    expect(res.statusCode).toBe(201);
    expect((res.json() as { files: { path: string }[] }).files.map((f) => f.path)).toEqual([
      'uploads/escape.txt',
      'uploads/win.ini',
      'uploads/metadata.json',
      'uploads/dup.txt',
      'uploads/dup (2).txt',
    ]);
    expect((await readdir(uploadsDir(gw, threadId))).sort()).toEqual(['dup (2).txt', 'dup.txt', 'escape.txt', 'metadata.json', 'win.ini']);
    // The workspace's own metadata was not replaced.
    const meta = JSON.parse(await readFile(path.join(gw.config.WORKSPACE_ROOT, 'default', threadId, '.metadata.json'), 'utf8')) as { thread_id: string };
    expect(meta.thread_id).toBe(threadId);
  });

  it('reports a file whose extension lies about its content', async () => {
    gw = await startTestGateway({ orchestrator: false });
    const threadId = await newThread(gw);
    const res = await upload(gw, threadId, [
      { name: 'report.pdf', data: PNG },
      { name: 'slides.pptx', data: 'plain words, not a presentation' },
    ]);
    expect(res.statusCode).toBe(201);
    const [png, txt] = (res.json() as { files: { type: string; warning?: string }[] }).files;
    expect(png).toMatchObject({ type: 'image', warning: 'named ".pdf" but the content is PNG (image/png)' });
    expect(txt).toMatchObject({ type: 'text', warning: 'named ".pptx" but the content is not PPTX (it is plain text)' });
  });

  it('a file over UPLOAD_MAX_FILE_BYTES gets 413 and nothing of the request is kept; the next upload works', async () => {
    gw = await startTestGateway({ orchestrator: false, env: { UPLOAD_MAX_FILE_BYTES: '1000' } });
    const threadId = await newThread(gw);
    const res = await upload(gw, threadId, [
      { name: 'small.txt', data: 'fits' },
      { name: 'big.bin', data: Buffer.alloc(5000, 1) },
    ]);
    expect(res.statusCode).toBe(413);
    expect((res.json() as { detail: string }).detail).toBe(
      'File "big.bin" is larger than the upload limit of 1000 bytes (UPLOAD_MAX_FILE_BYTES); nothing was stored.',
    );
    expect(await readdir(uploadsDir(gw, threadId))).toEqual([]);
    expect(await gw.store.listUploads('default', threadId)).toEqual([]);

    const again = await upload(gw, threadId, [{ name: 'small.txt', data: 'fits' }]);
    expect(again.statusCode).toBe(201);
    expect(await readdir(uploadsDir(gw, threadId))).toEqual(['small.txt']);
  });

  it('more files than UPLOAD_MAX_FILES gets 413 and stores none of them', async () => {
    gw = await startTestGateway({ orchestrator: false, env: { UPLOAD_MAX_FILES: '2' } });
    const threadId = await newThread(gw);
    const res = await upload(gw, threadId, [
      { name: 'a.txt', data: 'a' },
      { name: 'b.txt', data: 'b' },
      { name: 'c.txt', data: 'c' },
    ]);
    expect(res.statusCode).toBe(413);
    expect((res.json() as { detail: string }).detail).toContain('at most 2 per request (UPLOAD_MAX_FILES)');
    expect(await readdir(uploadsDir(gw, threadId))).toEqual([]);
  });

  it('a 200 MB upload streamed over HTTP is refused with 413 without buffering it, and the server goes on', async () => {
    gw = await startTestGateway({ orchestrator: false });
    await gw.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (gw.app.server.address() as AddressInfo).port;
    const threadId = await newThread(gw);
    const boundary = '----agentloop-test-boundary';
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="huge.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const chunk = Buffer.alloc(1024 * 1024, 7);
    const rssBefore = process.memoryUsage().rss;
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: `/threads/${threadId}/files`,
          headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on('error', reject);
      let sent = 0;
      const pump = (): void => {
        while (sent < 200) {
          sent++;
          if (!req.write(chunk)) {
            req.once('drain', pump);
            return;
          }
        }
        req.end(tail);
      };
      req.write(head);
      pump();
    });
    expect(status).toBe(413);
    expect(JSON.parse(body)).toMatchObject({ detail: expect.stringContaining('larger than the upload limit of 104857600 bytes') });
    // Streamed to disk and discarded: the process did not grow by anything like the 200 MB sent.
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(150 * 1024 * 1024);
    expect(await readdir(uploadsDir(gw, threadId))).toEqual([]);
    const next = await upload(gw, threadId, [{ name: 'ok.txt', data: 'ok' }]);
    expect(next.statusCode).toBe(201);
  });

  it('refuses non-multipart bodies (415), requests without a file (422) and unknown threads (404)', async () => {
    gw = await startTestGateway({ orchestrator: false });
    const threadId = await newThread(gw);
    const json = await gw.app.inject({ method: 'POST', url: `/threads/${threadId}/files`, payload: { file: 'x' } });
    expect(json.statusCode).toBe(415);
    const { body, contentType } = await multipart([], { note: 'no file here' });
    const empty = await gw.app.inject({ method: 'POST', url: `/threads/${threadId}/files`, payload: body, headers: { 'content-type': contentType } });
    expect(empty.statusCode).toBe(422);
    expect((empty.json() as { detail: string }).detail).toContain('body.file');
    const missing = await upload(gw, '00000000-0000-4000-8000-000000000000', [{ name: 'a.txt', data: 'a' }]);
    expect(missing.statusCode).toBe(404);
    const broken = await gw.app.inject({
      method: 'POST',
      url: `/threads/${threadId}/files`,
      payload: '--x\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nunterminated',
      headers: { 'content-type': 'multipart/form-data; boundary=x' },
    });
    expect(broken.statusCode).toBe(400);
    expect(await readdir(uploadsDir(gw, threadId))).toEqual([]);
  });
});

describe('GET /threads/{id}/files/{path}', () => {
  it('downloads an upload as an attachment with its type', async () => {
    gw = await startTestGateway({ orchestrator: false });
    const threadId = await newThread(gw);
    const pdf = buildPdf(['hello']);
    await upload(gw, threadId, [{ name: '报告.pdf', data: pdf }]);
    const res = await gw.app.inject({ method: 'GET', url: `/threads/${threadId}/files/uploads/${encodeURIComponent('报告.pdf')}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="__.pdf"; filename*=UTF-8''${encodeURIComponent('报告.pdf')}`);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(Buffer.compare(res.rawPayload, Buffer.from(pdf))).toBe(0);
  });

  it('serves outputs/ too, but nothing else of the workspace and nothing through a link', async () => {
    gw = await startTestGateway({ orchestrator: false });
    const threadId = await newThread(gw);
    await upload(gw, threadId, [{ name: 'a.txt', data: 'a' }]);
    const ws = path.join(gw.config.WORKSPACE_ROOT, 'default', threadId);
    await mkdir(path.join(ws, 'outputs', 'sub'), { recursive: true });
    await writeFile(path.join(ws, 'outputs', 'sub', 'report.md'), '# report');
    await writeFile(path.join(ws, 'temp', 'scratch.txt'), 'private');
    await symlink('/etc/passwd', path.join(ws, 'outputs', 'passwd'));
    await symlink(path.join(ws, 'temp'), path.join(ws, 'outputs', 'tmp'));
    const get = (p: string) => gw!.app.inject({ method: 'GET', url: `/threads/${threadId}/files/${p}` });

    const ok = await get('outputs/sub/report.md');
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toBe('# report');
    expect(ok.headers['content-type']).toBe('text/markdown; charset=utf-8');

    for (const p of [
      'temp/scratch.txt',
      '.metadata.json',
      'uploads',
      'outputs/passwd',
      'outputs/tmp/scratch.txt',
      'uploads/../temp/scratch.txt',
      'uploads/%2e%2e/temp/scratch.txt',
      'uploads/..%2f..%2f..%2fetc%2fpasswd',
      'uploads/%00a.txt',
      'uploads/missing.txt',
    ]) {
      const res = await get(p);
      expect([p, res.statusCode]).toEqual([p, expect.any(Number)]);
      expect(res.statusCode, p).toBeGreaterThanOrEqual(400);
      expect(res.statusCode, p).toBeLessThan(500);
      expect(res.body, p).not.toContain('root:');
      expect(res.body, p).not.toContain('private');
    }
    const list = await gw.app.inject({ method: 'GET', url: `/threads/${threadId}/files` });
    expect((list.json() as { files: { path: string }[] }).files.map((f) => f.path)).toEqual(['uploads/a.txt', 'outputs/sub/report.md']);
  });

  it('refuses a 200 KB path with 422 naming the limit, echoing only its head (issue 18)', async () => {
    gw = await startTestGateway({ orchestrator: false });
    const threadId = await newThread(gw);
    const long = await gw.app.inject({ method: 'GET', url: `/threads/${threadId}/files/uploads/${'a/'.repeat(100_000)}x.txt` });
    expect(long.statusCode).toBe(422);
    expect(long.body).toMatch(/Path too long: 200013 bytes, more than the 4096 allowed \(Linux PATH_MAX\); use a shorter path: uploads\/a\/a\//);
    expect(long.body.length).toBeLessThan(1_000);
    const deep = await gw.app.inject({ method: 'GET', url: `/threads/${threadId}/files/outputs/${'d/'.repeat(200)}x` });
    expect(deep.statusCode).toBe(422);
    expect(deep.body).toContain('Path too deep: 202 segments, more than the 128 allowed');
    const elsewhere = await gw.app.inject({ method: 'GET', url: `/threads/${threadId}/files/private/${'p'.repeat(250)}/${'q'.repeat(250)}` });
    expect(elsewhere.statusCode).toBe(404);
    expect(elsewhere.body).toContain(`Not found: private/${'p'.repeat(56)}…. Only files under uploads/ and outputs/ can be downloaded.`);
    for (const res of [long, deep, elsewhere]) expect(res.body).not.toContain(gw.config.WORKSPACE_ROOT);
  });

  it('another tenant can neither list, download nor upload to the thread', async () => {
    gw = await startTestGateway({ orchestrator: false, env: { AGENTLOOP_API_KEYS: 'ka:acme,kb:globex' } });
    const a = { 'x-api-key': 'ka' };
    const b = { 'x-api-key': 'kb' };
    const threadId = await newThread(gw, a);
    expect((await upload(gw, threadId, [{ name: 'secret.txt', data: 'acme secret' }], a)).statusCode).toBe(201);
    expect((await gw.app.inject({ method: 'GET', url: `/threads/${threadId}/files`, headers: b })).statusCode).toBe(404);
    const dl = await gw.app.inject({ method: 'GET', url: `/threads/${threadId}/files/uploads/secret.txt`, headers: b });
    expect(dl.statusCode).toBe(404);
    expect(dl.body).not.toContain('acme secret');
    expect((await upload(gw, threadId, [{ name: 'x.txt', data: 'x' }], b)).statusCode).toBe(404);
    expect((await gw.app.inject({ method: 'GET', url: `/threads/${threadId}/files/uploads/secret.txt`, headers: a })).body).toBe('acme secret');
  });
});

describe('file references in the next message (seed 001 §3.3)', () => {
  it('the next run on the thread gets the uploads appended to its user message, with skill hints; later runs do not', async () => {
    gw = await startTestGateway();
    const threadId = await newThread(gw);
    await upload(gw, threadId, [
      { name: 'report.pdf', data: buildPdf(['x']) },
      { name: 'data.txt', data: 'hello' },
    ]);
    const run = async (text: string) => {
      const res = await gw!.app.inject({
        method: 'POST',
        url: `/threads/${threadId}/runs/wait`,
        payload: { assistant_id: 'agent', input: { messages: [{ role: 'user', content: text }] } },
      });
      expect(res.statusCode).toBe(200);
      const messages = (res.json() as { messages: { type: string; content: string }[] }).messages;
      return messages[messages.length - 1]?.content;
    };
    const pdfSize = (await readFile(path.join(uploadsDir(gw, threadId), 'report.pdf'))).length;
    expect(await run('Summarize these')).toBe(
      `echo: Summarize these\n\nUploaded files:\n- report.pdf → uploads/report.pdf (pdf, ${pdfSize} bytes) [use @pdf]\n- data.txt → uploads/data.txt (text, 5 bytes)`,
    );
    expect(await run('And again')).toBe('echo: And again');
  });

  it('uses the Chinese heading and hint with PROMPT_LANGUAGE=zh, and warns about a misleading file', async () => {
    gw = await startTestGateway({ env: { PROMPT_LANGUAGE: 'zh' } });
    const threadId = await newThread(gw);
    await upload(gw, threadId, [{ name: 'table.xlsx', data: PNG }]);
    const res = await gw.app.inject({
      method: 'POST',
      url: `/threads/${threadId}/runs/wait`,
      payload: { assistant_id: 'agent', input: { messages: [{ role: 'user', content: '帮我分析' }] } },
    });
    const messages = (res.json() as { messages: { content: string }[] }).messages;
    expect(messages[messages.length - 1]?.content).toBe(
      `echo: 帮我分析\n\n上传的文件：\n- table.xlsx → uploads/table.xlsx (image, ${PNG.length} bytes; 注意: named ".xlsx" but the content is PNG (image/png)) [可用 @xlsx 处理]`,
    );
  });
});
