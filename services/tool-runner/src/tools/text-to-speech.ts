import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { ToolError } from '../errors.js';
import { defineTool, type ToolDefinition } from '../registry.js';
import { audioUrl, authHeaders, writeOutputFile, type AudioEndpoint } from './audio-files.js';
import { callProvider } from './provider-request.js';

/** The formats of OpenAI's `response_format` for /audio/speech. */
export const SPEECH_FORMATS = ['wav', 'mp3', 'opus', 'aac', 'flac', 'pcm'] as const;

export interface TextToSpeechOptions {
  /** TTS_* endpoint; undefined when TTS_MODEL is unset: the tool is then off. */
  endpoint: AudioEndpoint | undefined;
  /** TTS_VOICE: voice used when the call names none. */
  defaultVoice: string;
  /** TTS_MAX_INPUT_CHARS: longest text one call speaks (OpenAI's limit is 4096). */
  maxInputChars: number;
  /** TTS_MAX_AUDIO_BYTES: largest audio accepted from the endpoint. */
  maxAudioBytes: number;
}

export const TTS_OFF_MESSAGE =
  'Text to speech is off on this server: no speech model is configured (the operator sets TTS_MODEL, and TTS_BASE_URL / TTS_API_KEY).';

export function textToSpeechArgs(maxInputChars: number) {
  return z.object({
    text: z.string().trim().min(1).max(maxInputChars).describe(`The text to speak (at most ${maxInputChars} characters)`),
    voice: z
      .string()
      .regex(/^[\w.-]{1,64}$/, 'a voice name: letters, digits, "_", "-", "." (at most 64)')
      .optional()
      .describe('Voice name of the speech model (default: the server default)'),
    format: z.enum(SPEECH_FORMATS).default('wav').describe('Audio format of the file'),
    file_name: z
      .string()
      .regex(/^[\w][\w.-]{0,99}$/, 'a plain file name (letters, digits, "_", "-", "."), no folders')
      .optional()
      .describe('Name of the file in outputs/ (the format extension is added when missing); default speech-<time>.<format>'),
  });
}

/**
 * text_to_speech (seed 003): text → an audio file in outputs/ through an OpenAI-compatible
 * `POST {TTS_BASE_URL}/audio/speech`; files in outputs/ come back to the user as the run's artifacts.
 * Off (disabled, and saying so when called) without TTS_MODEL.
 */
export function createTextToSpeechTool(opts: TextToSpeechOptions): ToolDefinition<ReturnType<typeof textToSpeechArgs>> {
  const { endpoint } = opts;
  return defineTool({
    name: 'text_to_speech',
    description: endpoint
      ? 'Convert text into speech audio and save it in outputs/ (WAV by default), where it is delivered to the user as a file.'
      : 'Text to speech (off on this server: no speech model is configured).',
    schema: textToSpeechArgs(opts.maxInputChars),
    metadata: {
      category: 'media',
      tags: ['audio', 'speech', 'write'],
      idempotent: false,
      displayName: 'Text to Speech',
      availableToSubagent: false,
      enabled: endpoint !== undefined,
    },
    async execute(args, ctx) {
      if (!endpoint) throw new ToolError('UNAVAILABLE', TTS_OFF_MESSAGE, { retryable: false });
      const res = await callProvider(endpoint, {
        label: 'speech endpoint',
        url: audioUrl(endpoint, 'speech'),
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: '*/*', ...authHeaders(endpoint) },
        body: JSON.stringify({ model: endpoint.model, input: args.text, voice: args.voice ?? opts.defaultVoice, response_format: args.format }),
        maxResponseBytes: opts.maxAudioBytes,
        signal: ctx.signal,
      });
      // A JSON or text answer with status 200 is an error report from a lenient server, not audio.
      if (/^(application\/json|text\/)/i.test(res.contentType) || res.body.length === 0) {
        const what = res.body.length === 0 ? 'an empty answer' : `${res.contentType} instead of audio: ${res.body.toString('utf8').slice(0, 200)}`;
        throw new ToolError('TOOL_FAILED', `The speech endpoint at ${audioUrl(endpoint, 'speech').origin} sent ${what}`);
      }
      const written = await writeOutputFile(ctx, `outputs/${fileName(args.file_name, args.format)}`, res.body);
      return `Saved ${res.body.length} bytes of ${args.format} speech to ${written}; it is delivered to the user with the answer.`;
    },
  });
}

/** The given name with the format's extension, or speech-<UTC time>-<random>.<format> (no clash between calls). */
function fileName(given: string | undefined, format: string): string {
  if (given) return given.toLowerCase().endsWith(`.${format}`) ? given : `${given}.${format}`;
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  return `speech-${stamp}-${randomBytes(3).toString('hex')}.${format}`;
}
