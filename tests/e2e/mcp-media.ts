/**
 * An MCP tool's image reaching a vision model (issue 14), shared by both modes
 * (tests/e2e/mcp-media.test.ts embedded, mcp-media-cluster.test.ts): server-everything's
 * `get-tiny-image` over stdio, a fake OpenAI-compatible provider serving a text-only `base` slot
 * and a `vision` slot. The run's first call goes to base; the tool result carries the PNG, so the
 * next call is routed to vision and carries the image as an `image_url` data URL in a user
 * message right after the tool message, whose own content is text only.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from 'vitest';
import { Client } from '@langchain/langgraph-sdk';
import type { FakeOpenAi, FakeTurn } from './fake-openai.js';
import { writeEverythingConfig } from './mcp-everything.js';

const require = createRequire(import.meta.url);
const EVERYTHING_DIR = path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json'));

/** The PNG server-everything returns, base64 (read from the installed package: the expected pixels). */
export async function tinyImageBase64(): Promise<string> {
  const mod = (await import(pathToFileURL(path.join(EVERYTHING_DIR, 'dist', 'tools', 'get-tiny-image.js')).href)) as { MCP_TINY_IMAGE: string };
  return mod.MCP_TINY_IMAGE;
}

/** mcp_servers.yaml in `dir`: server-everything over stdio, its image tool always offered as `tiny_image`. */
export const imageServerConfig = (dir: string): string => writeEverythingConfig(dir, { 'get-tiny-image': 'alias: tiny_image' });

/** What the fake model answers: the image tool first, the answer once a tool result is in. */
export const IMAGE_ANSWER = 'It is the MCP logo.';
export function imageTurn(messages: ReadonlyArray<{ role: string }>): FakeTurn {
  return messages.some((m) => m.role === 'tool') ? { answer: IMAGE_ANSWER } : { tool: { name: 'tiny_image', args: {} } };
}

/** base: text only; vision: the same fake under another model id (images accepted by default). */
export const visionEnv = (model: FakeOpenAi) => ({
  MODEL_BASE_API_KEY: 'test-key',
  MODEL_BASE_BASE_URL: model.baseUrl,
  MODEL_BASE_ID: 'fake-base',
  MODEL_VISION_API_KEY: 'test-key',
  MODEL_VISION_BASE_URL: model.baseUrl,
  MODEL_VISION_ID: 'fake-vision',
});

type Sent = { role: string; content?: unknown; tool_call_id?: string };

/** One run asks for the image; the vision model's request carries it, and the thread state keeps it. */
export async function expectImageSentToVisionModel(url: string, model: FakeOpenAi): Promise<void> {
  const png = await tinyImageBase64();
  const before = model.requests.length;
  const client = new Client({ apiUrl: url });
  const thread = await client.threads.create();
  const values = (await client.runs.wait(thread.thread_id, 'agent', {
    input: { messages: [{ role: 'user', content: 'What does the tiny image show?' }] },
  })) as { messages: Array<{ type: string; content: unknown; name?: string }> };

  // The thread state: the ToolMessage holds the text naming the saved file, then the image block.
  const tool = values.messages.find((m) => m.type === 'tool' && m.name === 'tiny_image');
  expect(tool, JSON.stringify(values.messages).slice(0, 2_000)).toBeDefined();
  const parts = tool!.content as Array<Record<string, unknown>>;
  expect(Array.isArray(parts)).toBe(true);
  expect(parts[0]).toMatchObject({ type: 'text' });
  expect(String(parts[0]!.text)).toMatch(/\[image saved to outputs\/mcp\/everything-get-tiny-image-\d+\.png \(image\/png, \d+ bytes\)\]/);
  expect(parts[1]).toMatchObject({ type: 'image', source_type: 'base64', mime_type: 'image/png', data: png });
  expect(values.messages.at(-1)).toMatchObject({ type: 'ai', content: IMAGE_ANSWER });

  // The provider's side: base picked the tool; vision got the tool message as text, then the image.
  const sent = model.requests.slice(before) as Array<{ model: string; messages: Sent[] }>;
  expect(sent.map((r) => r.model)).toEqual(['fake-base', 'fake-vision']);
  expect(JSON.stringify(sent[0]!.messages)).not.toContain('image_url');
  const msgs = sent[1]!.messages;
  const at = msgs.findIndex((m) => m.role === 'tool');
  expect(at).toBeGreaterThan(0);
  const toolText = JSON.stringify(msgs[at]!.content);
  expect(toolText).toContain('[image saved to outputs/mcp/everything-get-tiny-image-');
  expect(toolText).not.toContain(png.slice(0, 64));
  const follow = msgs[at + 1]!;
  expect(follow.role).toBe('user');
  expect(follow.content).toEqual([
    { type: 'text', text: expect.stringContaining('tiny_image') as unknown },
    { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
  ]);
  expect(msgs.slice(at + 2)).toEqual([]);
}
