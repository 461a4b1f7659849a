import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTempDir, createToolHarness, fakeSpeechAudio, startFakeProviders, type FakeProviders, type ToolHarness } from '../testing/index.js';
import { providerToolOptions, providerTools } from './provider-tools.js';

// The speech and transcription endpoints are a local fake on 127.0.0.1.

let fake: FakeProviders;
beforeAll(async () => {
  fake = await startFakeProviders();
});
afterAll(() => fake.close());

let h: ToolHarness | undefined;
afterEach(async () => {
  await h?.[Symbol.asyncDispose]();
  h = undefined;
});

async function withEnv(env: Record<string, string>): Promise<ToolHarness> {
  h = await createToolHarness({ env });
  for (const tool of providerTools(providerToolOptions(h.config))) h.registry.register(tool);
  return h;
}

const onFake = (extra: Record<string, string> = {}) => withEnv({ ...fake.env(), ...extra });
const since = (n: number) => fake.requests.slice(n);
const ws = (harness: ToolHarness, rel: string) => path.join(harness.workspace.root, rel);

describe('text_to_speech', () => {
  it('POSTs model, input, voice and format to /audio/speech and saves the audio under outputs/', async () => {
    const harness = await onFake();
    const before = fake.requests.length;
    const res = await harness.call('text_to_speech', { text: 'Hello there', voice: 'nova', file_name: 'greeting' });
    expect(res.error).toBeUndefined();
    const audio = fakeSpeechAudio('Hello there');
    expect(res.content).toBe(`Saved ${audio.length} bytes of wav speech to outputs/greeting.wav; it is delivered to the user with the answer.`);
    expect(await readFile(ws(harness, 'outputs/greeting.wav'))).toEqual(audio);
    const [req] = since(before);
    expect(req!.method).toBe('POST');
    expect(req!.url).toBe('/v1/audio/speech');
    expect(req!.headers.authorization).toBe('Bearer tts-key');
    expect(JSON.parse(req!.body.toString())).toEqual({ model: 'fake-tts', input: 'Hello there', voice: 'nova', response_format: 'wav' });
  });

  it('names the file speech-<time>-<random>.<format> by default and uses TTS_VOICE', async () => {
    const harness = await onFake({ TTS_VOICE: 'echo' });
    const before = fake.requests.length;
    const res = await harness.call('text_to_speech', { text: 'Short', format: 'mp3' });
    const written = /to (outputs\/speech-\d{8}T\d{6}-[0-9a-f]{6}\.mp3);/.exec(res.content)?.[1];
    expect(written, res.content).toBeDefined();
    expect(await readFile(ws(harness, written!))).toEqual(fakeSpeechAudio('Short'));
    expect(JSON.parse(since(before)[0]!.body.toString())).toMatchObject({ voice: 'echo', response_format: 'mp3' });
  });

  it('refuses bad arguments naming the field, before any request', async () => {
    const harness = await onFake({ TTS_MAX_INPUT_CHARS: '10' });
    const before = fake.requests.length;
    expect((await harness.call('text_to_speech', { text: 'x'.repeat(11) })).content).toMatch(/^Error: .*text/);
    expect((await harness.call('text_to_speech', { text: 'hi', file_name: '../escape' })).content).toMatch(/^Error: .*file_name/);
    expect((await harness.call('text_to_speech', { text: 'hi', format: 'exe' })).content).toMatch(/^Error: .*format/);
    expect(since(before)).toEqual([]);
  });

  it('reports an endpoint error, a timeout and a refused private address as tool errors', async () => {
    const down = await onFake({ TTS_BASE_URL: `${fake.origin}/fail/v1` });
    expect((await down.call('text_to_speech', { text: 'hi' })).content).toBe(
      `Error: The speech endpoint at ${fake.origin} answered HTTP 500: the fake provider is down`,
    );
    await h?.[Symbol.asyncDispose]();
    const hanging = await onFake({ TTS_BASE_URL: `${fake.origin}/hang/v1`, TTS_TIMEOUT_MS: '200' });
    expect((await hanging.call('text_to_speech', { text: 'hi' })).content).toBe(`Error: The speech endpoint at ${fake.origin} did not answer within 200 ms`);
    await h?.[Symbol.asyncDispose]();
    const before = fake.requests.length;
    const guarded = await onFake({ TOOL_PROVIDERS_ALLOW: '' });
    const refused = await guarded.call('text_to_speech', { text: 'hi' });
    expect(refused.content).toMatch(/^Error: Refused to reach the speech endpoint .*127\.0\.0\.1 is an internal address .*TOOL_PROVIDERS_ALLOW/);
    expect(since(before)).toEqual([]);
  });

  it('refuses audio larger than TTS_MAX_AUDIO_BYTES and writes nothing', async () => {
    const harness = await onFake({ TTS_MAX_AUDIO_BYTES: '50' });
    const res = await harness.call('text_to_speech', { text: 'a sentence long enough to pass fifty bytes of audio', file_name: 'big' });
    expect(res.content).toBe(`Error: The speech endpoint at ${fake.origin} sent more than 50 bytes; the answer was dropped`);
    await expect(readFile(ws(harness, 'outputs/big.wav'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('transcribe_audio', () => {
  it('sends the workspace file as multipart with model and language, and returns the text', async () => {
    const harness = await onFake();
    await mkdir(ws(harness, 'uploads'), { recursive: true });
    const audio = fakeSpeechAudio('spoken words');
    await writeFile(ws(harness, 'uploads/meeting notes.wav'), audio);
    fake.transcript = '  The meeting starts at nine.  ';
    const before = fake.requests.length;
    const res = await harness.call('transcribe_audio', { file_path: 'uploads/meeting notes.wav', language: 'en' });
    expect(res.error).toBeUndefined();
    expect(res.content).toBe('The meeting starts at nine.');
    const [req] = since(before);
    expect(req!.url).toBe('/v1/audio/transcriptions');
    expect(req!.headers.authorization).toBe('Bearer stt-key');
    const boundary = /boundary=(.+)$/.exec(String(req!.headers['content-type']))![1]!;
    const body = req!.body.toString('latin1');
    expect(body).toContain(`--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nfake-stt\r\n`);
    expect(body).toContain('name="language"\r\n\r\nen\r\n');
    expect(body).toContain('name="file"; filename="meeting_notes.wav"\r\nContent-Type: audio/wav\r\n\r\n');
    expect(req!.body.includes(audio)).toBe(true);
    expect(body.endsWith(`\r\n--${boundary}--\r\n`)).toBe(true);
  });

  it('says when nothing was recognized', async () => {
    const harness = await onFake();
    await mkdir(ws(harness, 'uploads'), { recursive: true });
    await writeFile(ws(harness, 'uploads/silence.wav'), fakeSpeechAudio(''));
    fake.transcript = '';
    expect((await harness.call('transcribe_audio', { file_path: 'uploads/silence.wav' })).content).toBe('No speech was recognized in uploads/silence.wav.');
  });

  it('reads only inside the workspace and within STT_MAX_FILE_BYTES', async () => {
    const harness = await onFake({ STT_MAX_FILE_BYTES: '100' });
    await using outside = await createTempDir('agentloop-stt-outside-');
    await writeFile(path.join(outside.path, 'secret.wav'), 'secret');
    await mkdir(ws(harness, 'uploads'), { recursive: true });
    await symlink(path.join(outside.path, 'secret.wav'), ws(harness, 'uploads/link.wav'));
    await writeFile(ws(harness, 'uploads/long.wav'), Buffer.alloc(101, 1));
    const before = fake.requests.length;
    expect((await harness.call('transcribe_audio', { file_path: '../../other/uploads/a.wav' })).content).toMatch(/^Error: Path outside workspace/);
    expect((await harness.call('transcribe_audio', { file_path: 'uploads/link.wav' })).content).toMatch(/^Error: Path outside workspace/);
    expect((await harness.call('transcribe_audio', { file_path: 'uploads/long.wav' })).content).toBe(
      'Error: uploads/long.wav is 101 bytes; transcribe_audio accepts files up to 100 bytes',
    );
    expect((await harness.call('transcribe_audio', { file_path: 'uploads/missing.wav' })).content).toMatch(/^Error: .*uploads\/missing\.wav/);
    expect((await harness.call('transcribe_audio', { file_path: 'uploads/x.wav', language: 'English' })).content).toMatch(/^Error: .*language/);
    expect(since(before)).toEqual([]);
  });

  it('answers an unreachable endpoint with a tool error', async () => {
    const closed = await startFakeProviders();
    const origin = closed.origin;
    await closed.close();
    const harness = await withEnv({ TOOL_PROVIDERS_ALLOW: '127.0.0.1', STT_MODEL: 'm', STT_BASE_URL: `${origin}/v1` });
    await mkdir(ws(harness, 'uploads'), { recursive: true });
    await writeFile(ws(harness, 'uploads/a.wav'), fakeSpeechAudio('x'));
    expect((await harness.call('transcribe_audio', { file_path: 'uploads/a.wav' })).content).toBe(
      `Error: The transcription endpoint at ${origin} is unreachable: ECONNREFUSED`,
    );
  });
});

describe('provider tools when unconfigured', () => {
  it('count empty variables (k8s/base/config.yaml ships them empty) as unset', async () => {
    const empty = Object.fromEntries(
      [
        'WEB_SEARCH_PROVIDER',
        'WEB_SEARCH_SEARXNG_URL',
        'WEB_SEARCH_BRAVE_API_KEY',
        'WEB_SEARCH_TAVILY_API_KEY',
        'TTS_MODEL',
        'TTS_BASE_URL',
        'TTS_API_KEY',
        'STT_MODEL',
        'STT_BASE_URL',
        'STT_API_KEY',
        'TOOL_PROVIDERS_ALLOW',
      ].map((k) => [k, '']),
    );
    const harness = await withEnv(empty);
    expect(harness.config.TTS_BASE_URL).toBe('https://api.openai.com/v1');
    const offered = harness.registry.names();
    expect(harness.registry.discovered().map((r) => r.def.name)).toEqual(expect.arrayContaining(['web_search', 'text_to_speech', 'transcribe_audio']));
    expect(offered.filter((n) => ['web_search', 'text_to_speech', 'transcribe_audio'].includes(n))).toEqual([]);
  });

  it('are not offered, and say what turns them on when called anyway', async () => {
    const harness = await withEnv({});
    expect(harness.registry.names()).not.toContain('text_to_speech');
    expect(harness.registry.names()).not.toContain('transcribe_audio');
    const run = (toolName: string, args: object) =>
      harness.executor.execute({
        tenantId: 'tenant-a',
        threadId: 'thread-1',
        runId: 'run-1',
        toolCallId: toolName,
        toolName,
        argsJson: JSON.stringify(args),
        onDemand: true,
      });
    expect((await run('text_to_speech', { text: 'hi' })).content).toBe(
      'Error: Text to speech is off on this server: no speech model is configured (the operator sets TTS_MODEL, and TTS_BASE_URL / TTS_API_KEY).',
    );
    expect((await run('transcribe_audio', { file_path: 'uploads/a.wav' })).content).toBe(
      'Error: Transcription is off on this server: no transcription model is configured (the operator sets STT_MODEL, and STT_BASE_URL / STT_API_KEY).',
    );
  });
});
