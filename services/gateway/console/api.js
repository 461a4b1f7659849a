// The console's only door to the server: the public HTTP API, with the API key the operator
// typed (kept in sessionStorage: gone when the tab closes) sent as the usual x-api-key header.
import { signal } from '@preact/signals';

const KEY_ITEM = 'agentloop.console.apiKey';

/** The API key in use: null before the operator signs in; '' is allowed (a server without keys). */
export const apiKey = signal(sessionStorage.getItem(KEY_ITEM));
/** Set when the server refused the key (401): the console asks again. */
export const authError = signal('');

export function setApiKey(key) {
  sessionStorage.setItem(KEY_ITEM, key);
  apiKey.value = key;
  authError.value = '';
}

export function forgetApiKey() {
  sessionStorage.removeItem(KEY_ITEM);
  apiKey.value = null;
}

function headers(extra = {}) {
  return apiKey.value ? { 'x-api-key': apiKey.value, ...extra } : extra;
}

/** An error the API answered, with its status and the server's `detail`. */
export class ApiFailure extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
  }
}

export async function api(path, { method = 'GET', body } = {}) {
  const res = await fetch(path, {
    method,
    headers: headers(body === undefined ? {} : { 'content-type': 'application/json' }),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (res.status === 401) authError.value = 'The server refused this API key.';
  const text = await res.text();
  const json = text ? JSON.parse(text) : null;
  if (!res.ok) throw new ApiFailure(res.status, json?.detail ?? `${res.status} ${res.statusText}`);
  return json;
}

/**
 * Follows `GET /console/events` (SSE). EventSource cannot send headers, so the stream is read with
 * fetch; it reconnects after a drop. Returns a function that stops it.
 */
export function followEvents(onEvent, onState) {
  const stop = new AbortController();
  (async () => {
    while (!stop.signal.aborted) {
      try {
        const res = await fetch('/console/events', { headers: headers(), signal: stop.signal });
        if (!res.ok || !res.body) throw new Error(`live updates refused: ${res.status}`);
        onState('live');
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let end;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const event = /^event: (.*)$/m.exec(block)?.[1];
            const data = block
              .split('\n')
              .filter((l) => l.startsWith('data: '))
              .map((l) => l.slice(6))
              .join('\n');
            if (event && data) onEvent(event, JSON.parse(data));
          }
        }
      } catch {
        if (stop.signal.aborted) return;
      }
      onState('reconnecting');
      await new Promise((r) => setTimeout(r, 2000));
    }
  })();
  return () => stop.abort();
}
