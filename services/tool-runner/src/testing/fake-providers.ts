import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a fake provider received. */
export interface FakeRequest {
  method: string;
  /** Path and query. */
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** One hit served by every fake search provider, in its own wire shape. */
export interface FakeHit {
  title: string;
  url: string;
  snippet: string;
}

/** The bytes the fake speech endpoint answers: a tiny but valid WAV header plus the text, so tests can trace it. */
export function fakeSpeechAudio(text: string): Buffer {
  const data = Buffer.from(text, 'utf8');
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(16_000, 24);
  header.writeUInt32LE(32_000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

export interface FakeProviders extends AsyncDisposable {
  /** http://127.0.0.1:<port> */
  readonly origin: string;
  readonly port: number;
  /** Every request, in arrival order. */
  readonly requests: FakeRequest[];
  /** Hits the search fakes answer (all of them; the provider trims). */
  hits: FakeHit[];
  /** Transcript the fake transcription endpoint answers. */
  transcript: string;
  /** Env for the tool-runner pointing every provider here (allowing 127.0.0.1:<port>). */
  env(): Record<string, string>;
  close(): Promise<void>;
}

/**
 * Local stand-ins for the providers, on 127.0.0.1 and one port:
 * - SearXNG `GET /searxng/search?format=json&q=` → `{results: [{title, url, content}]}`
 * - Brave `GET /brave/res/v1/web/search?q=&count=` (X-Subscription-Token) → `{web: {results: [{title, url, description}]}}`
 * - Tavily `POST /tavily/search` (Bearer) → `{results: [{title, url, content, score}]}`
 * - OpenAI audio `POST /v1/audio/speech` → audio/wav; `POST /v1/audio/transcriptions` (multipart) → `{text}`
 * Paths under `/fail/` answer 500 with an OpenAI-style error; `/hang/` never answers.
 */
export async function startFakeProviders(initialHits: FakeHit[] = []): Promise<FakeProviders> {
  const requests: FakeRequest[] = [];
  const state = { hits: initialHits, transcript: 'hello from the fake transcriber' };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      route(req, res, body, state);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return {
    origin,
    port,
    requests,
    get hits() {
      return state.hits;
    },
    set hits(v) {
      state.hits = v;
    },
    get transcript() {
      return state.transcript;
    },
    set transcript(v) {
      state.transcript = v;
    },
    env: () => ({
      TOOL_PROVIDERS_ALLOW: `127.0.0.1:${port}`,
      WEB_SEARCH_SEARXNG_URL: `${origin}/searxng`,
      TTS_MODEL: 'fake-tts',
      TTS_BASE_URL: `${origin}/v1`,
      TTS_API_KEY: 'tts-key',
      STT_MODEL: 'fake-stt',
      STT_BASE_URL: `${origin}/v1`,
      STT_API_KEY: 'stt-key',
    }),
    close,
    [Symbol.asyncDispose]: close,
  };
}

function json(res: http.ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

function route(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer, state: { hits: FakeHit[]; transcript: string }): void {
  const url = new URL(req.url ?? '/', 'http://fake');
  if (url.pathname.startsWith('/hang/')) return; // never answers: timeouts
  if (url.pathname.startsWith('/fail/')) return json(res, 500, { error: { message: 'the fake provider is down', type: 'server_error' } });
  switch (`${req.method} ${url.pathname}`) {
    case 'GET /searxng/search':
      if (url.searchParams.get('format') !== 'json') return json(res, 403, { error: 'format not allowed' });
      return json(res, 200, {
        query: url.searchParams.get('q'),
        results: state.hits.map((h) => ({ title: h.title, url: h.url, content: h.snippet, engine: 'fake' })),
      });
    case 'GET /brave/res/v1/web/search': {
      if (!req.headers['x-subscription-token']) return json(res, 401, { error: { detail: 'missing token' } });
      const count = Number(url.searchParams.get('count') ?? 20);
      const results = state.hits.slice(0, count).map((h) => ({ title: h.title, url: h.url, description: `<strong>${h.snippet}</strong>` }));
      return json(res, 200, { type: 'search', web: { type: 'search', results } });
    }
    case 'POST /tavily/search': {
      if (!req.headers.authorization?.startsWith('Bearer ')) return json(res, 401, { detail: { error: 'Unauthorized' } });
      const ask = JSON.parse(body.toString('utf8')) as { query: string; max_results?: number };
      const results = state.hits.slice(0, ask.max_results ?? 5).map((h, i) => ({ title: h.title, url: h.url, content: h.snippet, score: 1 - i / 10 }));
      return json(res, 200, { query: ask.query, results, response_time: 0.01 });
    }
    case 'POST /v1/audio/speech': {
      const ask = JSON.parse(body.toString('utf8')) as { input: string };
      res.writeHead(200, { 'content-type': 'audio/wav' });
      return void res.end(fakeSpeechAudio(ask.input));
    }
    case 'POST /v1/audio/transcriptions':
      if (!String(req.headers['content-type']).startsWith('multipart/form-data; boundary='))
        return json(res, 400, { error: { message: 'expected multipart' } });
      return json(res, 200, { text: state.transcript });
    default:
      return json(res, 404, { error: { message: `no fake at ${req.method} ${url.pathname}` } });
  }
}
