import type { IncomingFile } from './channel.js';

/** Where the AgentLoop server is and how to authenticate (the SDK has no client for thread files). */
export interface ServerAccess {
  apiUrl: string;
  apiKey?: string;
}

/** A file of a thread's workspace as `GET /threads/{id}/files` lists it. */
export interface WorkspaceFile {
  path: string;
  name: string;
  size: number;
  modified_at: string;
  url: string;
}

export interface UploadedFile {
  name: string;
  path: string;
  size: number;
  type?: string;
  warning?: string;
}

/** A call to an AgentLoop endpoint the server refused or failed, with its HTTP status and own words. */
export class ServerCallError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** A failed call to the files API, with the server's own message (it names what was wrong). */
export class WorkspaceFilesError extends ServerCallError {
  override name = 'WorkspaceFilesError';
  readonly code = 'WORKSPACE_FILES';
}

const trimSlash = (url: string) => url.replace(/\/+$/, '');

/**
 * The thread files API of AgentLoop (`/threads/{id}/files`): uploads in (announced to the thread's
 * next run by the server) and `uploads/` + `outputs/` files out.
 */
export class WorkspaceFiles {
  constructor(private readonly access: ServerAccess) {}

  private headers(): Record<string, string> {
    return this.access.apiKey ? { 'x-api-key': this.access.apiKey } : {};
  }

  private base(threadId: string): string {
    return `${trimSlash(this.access.apiUrl)}/threads/${encodeURIComponent(threadId)}/files`;
  }

  /** Absolute URL of a workspace file (the server's url may be relative to its base). */
  absoluteUrl(url: string): string {
    return /^https?:\/\//.test(url) ? url : `${trimSlash(this.access.apiUrl)}${url.startsWith('/') ? '' : '/'}${url}`;
  }

  async upload(threadId: string, files: IncomingFile[]): Promise<UploadedFile[]> {
    const form = new FormData();
    for (const f of files) form.append('file', new Blob([f.data], f.mime ? { type: f.mime } : {}), f.name);
    const res = await fetch(this.base(threadId), { method: 'POST', body: form, headers: this.headers() });
    const body = (await this.json(res)) as { files?: UploadedFile[] };
    return body.files ?? [];
  }

  async list(threadId: string): Promise<WorkspaceFile[]> {
    const res = await fetch(this.base(threadId), { headers: this.headers() });
    const body = (await this.json(res)) as { files?: WorkspaceFile[] };
    return body.files ?? [];
  }

  async download(file: Pick<WorkspaceFile, 'url'>): Promise<Uint8Array> {
    const res = await fetch(this.absoluteUrl(file.url), { headers: this.headers() });
    if (!res.ok) await this.json(res);
    return new Uint8Array(await res.arrayBuffer());
  }

  private async json(res: Response): Promise<unknown> {
    const text = await res.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : {};
    } catch {
      body = { message: text };
    }
    if (!res.ok) {
      const msg = (body as { message?: unknown; detail?: unknown }).message ?? (body as { detail?: unknown }).detail ?? res.statusText;
      throw new WorkspaceFilesError(`${res.status}: ${String(msg)}`, res.status);
    }
    return body;
  }
}
