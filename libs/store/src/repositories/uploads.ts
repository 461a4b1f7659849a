/**
 * Files uploaded to a thread's workspace: pending until the thread's next run claims them
 * (`RunLifecycle.admit` claims them in its own transaction; `claim` here is the standalone form).
 */
import type { NewUpload, UploadRecord } from '../types.js';
import type { RepositoryContext } from './context.js';
import { checkId, toUpload } from './rows.js';

export class UploadRepository {
  constructor(private readonly ctx: RepositoryContext) {}

  async add(u: NewUpload): Promise<UploadRecord> {
    checkId('tenantId', u.tenantId);
    checkId('threadId', u.threadId);
    checkId('uploadId', u.uploadId);
    const row = {
      tenant_id: u.tenantId,
      thread_id: u.threadId,
      upload_id: u.uploadId,
      path: u.path,
      name: u.name,
      original_name: u.originalName,
      type: u.type,
      mime: u.mime,
      size: u.size,
      mismatch: u.mismatch,
      created_at: this.ctx.now(),
      run_id: null,
    };
    await this.ctx.db.insertInto('thread_uploads').values(row).execute();
    return toUpload(row);
  }

  async claim(tenantId: string, threadId: string, runId: string): Promise<UploadRecord[]> {
    checkId('runId', runId);
    // One UPDATE claims every pending row: concurrent claims by two runs split nothing twice.
    await this.ctx.db
      .updateTable('thread_uploads')
      .set({ run_id: runId })
      .where('tenant_id', '=', tenantId)
      .where('thread_id', '=', threadId)
      .where('run_id', 'is', null)
      .execute();
    const rows = await this.ctx.db
      .selectFrom('thread_uploads')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('thread_id', '=', threadId)
      .where('run_id', '=', runId)
      .orderBy('created_at')
      .orderBy('upload_id')
      .execute();
    return rows.map(toUpload);
  }

  async list(tenantId: string, threadId: string): Promise<UploadRecord[]> {
    const rows = await this.ctx.db
      .selectFrom('thread_uploads')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('thread_id', '=', threadId)
      .orderBy('created_at')
      .orderBy('upload_id')
      .execute();
    return rows.map(toUpload);
  }
}
