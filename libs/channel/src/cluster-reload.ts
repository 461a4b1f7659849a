import { ServerCallError, type ServerAccess } from './workspace-files.js';

/** One service replica's answer to `POST /admin/reload`. */
export interface ServiceReload {
  service: string;
  instance: string;
  ok: boolean;
  reloaded: Record<string, unknown>;
  error?: string;
}

/** A refused or failed reload, with the server's own words (a tenant key: 403 "Admin only: …"). */
export class ClusterReloadError extends ServerCallError {
  override name = 'ClusterReloadError';
  readonly code = 'CLUSTER_RELOAD';
}

/** Asks AgentLoop to reload tools, skills, MCP servers and rules on every service (`POST /admin/reload`, admin keys only). */
export async function reloadCluster(access: ServerAccess): Promise<ServiceReload[]> {
  const res = await fetch(`${access.apiUrl.replace(/\/+$/, '')}/admin/reload`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(access.apiKey ? { 'x-api-key': access.apiKey } : {}) },
    body: JSON.stringify({ reason: 'channel /reload' }),
  });
  const body = (await res.json().catch(() => ({}))) as { detail?: unknown; services?: ServiceReload[] };
  if (res.status === 404) throw new ClusterReloadError('This server has no reload endpoint (POST /admin/reload): restart its services to reload.', 404);
  if (!res.ok) throw new ClusterReloadError(`${res.status}: ${String(body.detail ?? res.statusText)}`, res.status);
  return body.services ?? [];
}

/** What each service reloaded, one line each (`tool-runner ✓ 12 tools`). */
export function describeReload(results: ServiceReload[]): string {
  if (results.length === 0) return 'No service answered the reload in time.';
  const summary = (r: ServiceReload): string => {
    if (!r.ok) return `✗ ${r.error ?? 'failed'}`;
    const parts = Object.entries(r.reloaded).map(([k, v]) => (Array.isArray(v) ? `${v.length} ${k}` : `${k}: ${JSON.stringify(v)}`));
    return `✓ ${parts.join(', ') || 'reloaded'}`;
  };
  return ['Reloaded:', ...results.map((r) => `  ${r.service} (${r.instance}) ${summary(r)}`)].join('\n');
}
