// Small display helpers shared by the panels.

export function duration(ms) {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

export function time(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  return d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
}

export function ago(iso) {
  return iso ? `${duration(Date.now() - new Date(iso).getTime())} ago` : '—';
}

// The last 8 characters: random in a UUIDv4 and a UUIDv7 alike, whereas a v7 id (the server's
// threads and runs) begins with its creation time, the same for every run of the same minute.
export const shortId = (id) => (id ? id.slice(-8) : '—');

export const tokens = (t) => (t ? t.total_tokens.toLocaleString() : '—');

export function json(v) {
  return typeof v === 'string' ? v : JSON.stringify(v, null, 2);
}
