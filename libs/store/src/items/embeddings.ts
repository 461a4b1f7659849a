/**
 * Embeddings for the memory store's semantic search (issue 12): any OpenAI-compatible
 * `POST {base}/embeddings` endpoint, configured by env like the chat model slots
 * (`<PREFIX>API_KEY`, `_BASE_URL`, model id): STORE_EMBEDDINGS_MODEL enables it.
 */
import { AgentLoopError, ConfigError, errorMessage } from '@agentloop/core';

export interface Embedder {
  /** One vector per text, in order. */
  embed(texts: readonly string[]): Promise<number[][]>;
}

export interface EmbeddingsConfig {
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Asked of the endpoint (`dimensions`), and checked on every vector returned. */
  dims?: number;
  /** Per request (default 30 s). */
  timeoutMs?: number;
}

/** The embeddings endpoint the env configures, or undefined (then a query is a text match). A bad value is a ConfigError. */
export type EmbeddingsEnv = Partial<
  Record<'STORE_EMBEDDINGS_MODEL' | 'STORE_EMBEDDINGS_BASE_URL' | 'STORE_EMBEDDINGS_API_KEY' | 'STORE_EMBEDDINGS_DIMS', string>
>;

export function embeddingsFromEnv(env: EmbeddingsEnv): EmbeddingsConfig | undefined {
  const model = env.STORE_EMBEDDINGS_MODEL?.trim();
  if (!model) return undefined;
  const baseUrl = (env.STORE_EMBEDDINGS_BASE_URL?.trim() || 'https://api.openai.com/v1').replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]/.test(baseUrl) || !URL.canParse(baseUrl)) {
    throw new ConfigError(`Invalid STORE_EMBEDDINGS_BASE_URL ${JSON.stringify(baseUrl)}: expected an http(s) URL such as https://api.openai.com/v1`);
  }
  const dimsText = env.STORE_EMBEDDINGS_DIMS?.trim();
  const dims = dimsText ? Number(dimsText) : undefined;
  if (dims !== undefined && (!Number.isInteger(dims) || dims < 1 || dims > 65_536)) {
    throw new ConfigError(`Invalid STORE_EMBEDDINGS_DIMS ${JSON.stringify(dimsText)}: expected an integer from 1 to 65536`);
  }
  const apiKey = env.STORE_EMBEDDINGS_API_KEY?.trim();
  return { baseUrl, model, ...(apiKey ? { apiKey } : {}), ...(dims !== undefined ? { dims } : {}) };
}

interface EmbeddingsResponse {
  data: Array<{ embedding: number[]; index?: number }>;
}

function isEmbeddingsResponse(body: unknown): body is EmbeddingsResponse {
  const data = (body as { data?: unknown } | null)?.data;
  return (
    Array.isArray(data) &&
    data.every((d) => Array.isArray((d as { embedding?: unknown })?.embedding) && (d as { embedding: unknown[] }).embedding.every((x) => typeof x === 'number'))
  );
}

export class OpenAiEmbeddings implements Embedder {
  constructor(private readonly config: EmbeddingsConfig) {}

  async embed(texts: readonly string[]): Promise<number[][]> {
    if (texts.length === 0) return [];
    const url = `${this.config.baseUrl}/embeddings`;
    let body: unknown;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.config.apiKey ? { authorization: `Bearer ${this.config.apiKey}` } : {}) },
        body: JSON.stringify({ model: this.config.model, input: texts, ...(this.config.dims ? { dimensions: this.config.dims } : {}) }),
        signal: AbortSignal.timeout(this.config.timeoutMs ?? 30_000),
      });
      if (!res.ok) throw new Error(`HTTP ${res.status}: ${(await res.text()).slice(0, 300)}`);
      body = await res.json();
    } catch (err) {
      throw new AgentLoopError('UNAVAILABLE', `Embeddings endpoint ${url} failed: ${errorMessage(err)}`, { cause: err });
    }
    if (!isEmbeddingsResponse(body) || body.data.length !== texts.length) {
      throw new AgentLoopError('UNAVAILABLE', `Embeddings endpoint ${url} returned an unexpected body (expected ${texts.length} vectors under "data")`);
    }
    const vectors = [...body.data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0)).map((d) => d.embedding);
    if (this.config.dims !== undefined && vectors.some((v) => v.length !== this.config.dims)) {
      throw new AgentLoopError('UNAVAILABLE', `Embeddings endpoint ${url} returned vectors of the wrong size (expected ${this.config.dims})`);
    }
    return vectors;
  }
}
