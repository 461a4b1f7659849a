/**
 * web_search and text_to_speech end to end (embedded, through the HTTP API): the tool-runner is
 * configured by env to a local fake SearXNG and a fake OpenAI-compatible speech endpoint; a scripted
 * agent searches, speaks a summary and answers with the result it found; the audio file comes back
 * as the run's artifact and downloads byte for byte.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@langchain/langgraph-sdk';
import { fakeSpeechAudio, startFakeProviders, type FakeProviders } from '@agentloop/tool-runner/testing';
import { scripted, useEmbeddedServer } from './helpers.js';

type Msg = { type: string; content: string; name?: string; response_metadata?: { seen?: { tools: string[] } } };
interface Artifact {
  name: string;
  path: string;
  size: number;
  url: string;
}

const HIT = { title: 'Orbital warehouse migration finished', url: 'https://news.example.org/orbital', snippet: 'The migration finished ahead of plan.' };
const SPOKEN = 'The orbital warehouse migration finished ahead of plan.';

describe('web_search and text_to_speech (embedded)', () => {
  let fake: FakeProviders;
  // Filled before the server starts (hooks run in registration order): the fakes' port is known only then.
  const env: Record<string, string> = { ALLOW_SCRIPTED_MODEL: 'true' };
  beforeAll(async () => {
    fake = await startFakeProviders([HIT, { title: 'Unrelated', url: 'https://other.example.org/', snippet: 'Nothing here.' }]);
    Object.assign(env, fake.env());
  });
  const server = useEmbeddedServer('agentloop-web-speech-', env);
  afterAll(() => fake?.close());

  it('searches through the fake provider, speaks the summary to outputs/ and returns it as an artifact', async () => {
    const client = new Client({ apiUrl: server.url });
    const thread = await client.threads.create();
    const answer = `Found "${HIT.title}" (${HIT.url}); the summary is read aloud in outputs/summary.wav.`;
    const values = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'What happened to the orbital warehouse? Read me the answer.' }] },
      config: scripted([
        { tool_calls: [{ name: 'web_search', args: { query: 'orbital warehouse migration', max_results: 1 } }] },
        { tool_calls: [{ name: 'text_to_speech', args: { text: SPOKEN, file_name: 'summary' } }] },
        { content: answer },
      ]),
    })) as { messages: Msg[]; artifacts: Artifact[] };

    const tools = values.messages.filter((m) => m.type === 'tool');
    expect(tools.map((t) => t.name)).toEqual(['web_search', 'text_to_speech']);
    expect(JSON.parse(tools[0]!.content)).toEqual({ provider: 'searxng', query: 'orbital warehouse migration', results: [HIT] });
    const audio = fakeSpeechAudio(SPOKEN);
    expect(tools[1]!.content).toBe(`Saved ${audio.length} bytes of wav speech to outputs/summary.wav; it is delivered to the user with the answer.`);

    // Both tools were offered to the model, and the answer carries the search result.
    const ai = values.messages.filter((m) => m.type === 'ai');
    expect(ai[0]!.response_metadata?.seen?.tools).toEqual(expect.arrayContaining(['web_search', 'text_to_speech', 'transcribe_audio']));
    expect(ai.at(-1)!.content).toContain(HIT.url);

    // The providers were called the way their APIs want.
    const search = fake.requests.find((r) => r.url.startsWith('/searxng/search'))!;
    expect(new URL(search.url, 'http://x').searchParams.get('q')).toBe('orbital warehouse migration');
    const speech = fake.requests.find((r) => r.url === '/v1/audio/speech')!;
    expect(JSON.parse(speech.body.toString())).toEqual({ model: 'fake-tts', input: SPOKEN, voice: 'alloy', response_format: 'wav' });

    // The audio is the run's artifact and downloads byte for byte.
    expect(values.artifacts).toEqual([
      expect.objectContaining({
        name: 'summary.wav',
        path: 'outputs/summary.wav',
        size: audio.length,
        url: `/threads/${thread.thread_id}/files/outputs/summary.wav`,
      }),
    ]);
    const download = await fetch(new URL(values.artifacts[0]!.url, server.url));
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer())).toEqual(audio);
  });
});

describe('web_search and speech without providers (embedded)', () => {
  const server = useEmbeddedServer('agentloop-web-speech-off-', { ALLOW_SCRIPTED_MODEL: 'true' });

  it('does not offer them, and an @mentioned web_search says that web search is off', async () => {
    const client = new Client({ apiUrl: server.url });
    const thread = await client.threads.create();
    const values = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: '@web_search what is new about the orbital warehouse?' }] },
      config: scripted([{ tool_calls: [{ name: 'web_search', args: { query: 'orbital warehouse' } }] }, { content: 'Web search is not available here.' }]),
    })) as { messages: Msg[]; artifacts: Artifact[] };
    const seen = values.messages.find((m) => m.type === 'ai')!.response_metadata!.seen!.tools;
    expect(seen).toContain('web_search');
    expect(seen).not.toContain('text_to_speech');
    expect(seen).not.toContain('transcribe_audio');
    const tool = values.messages.find((m) => m.type === 'tool')!;
    expect(tool.content).toBe(
      'Error: Web search is off on this server: no search provider is configured (the operator sets WEB_SEARCH_SEARXNG_URL, WEB_SEARCH_BRAVE_API_KEY or WEB_SEARCH_TAVILY_API_KEY).',
    );
  });
});
