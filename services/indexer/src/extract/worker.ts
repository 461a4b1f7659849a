/**
 * Extraction worker (node:worker_threads). Runs one job at a time for the
 * ExtractorPool: extract a document (read) or extract it and build its index
 * (search). Imports no workspace package so it loads from source or dist alike.
 */
import { parentPort } from 'node:worker_threads';
import { buildIndexFile } from '../search/doc-index.js';
import { ExtractError } from './errors.js';
import { extractDocument } from './extract.js';
import type { WorkerRequest, WorkerResponse } from './protocol.js';

const port = parentPort;
if (!port) throw new Error('extraction worker started outside a worker thread');

port.on('message', (req: WorkerRequest) => {
  void handle(req).then((res) => port.postMessage(res));
});
port.postMessage({ type: 'ready' });

async function handle(req: WorkerRequest): Promise<WorkerResponse> {
  try {
    const extraction = await extractDocument(req.bytes, req.sniffed, req.claimed, req.limits);
    if (req.op === 'extract') return { type: 'result', id: req.id, ok: true, extraction };
    return { type: 'result', id: req.id, ok: true, index: buildIndexFile(extraction, req.hash ?? '') };
  } catch (err) {
    const e = err instanceof ExtractError ? err : new ExtractError('INTERNAL', `extraction failed: ${err instanceof Error ? err.message : String(err)}`);
    return { type: 'result', id: req.id, ok: false, error: { code: e.code, message: e.message } };
  }
}
