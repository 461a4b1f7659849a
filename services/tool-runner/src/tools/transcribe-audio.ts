import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';
import { ToolError } from '../errors.js';
import { defineTool, type ToolDefinition } from '../registry.js';
import { audioMimeType, audioUrl, authHeaders, readWorkspaceFile, type AudioEndpoint } from './audio-files.js';
import { callProvider, providerJson } from './provider-request.js';

export const TranscribeAudioArgs = z.object({
  file_path: z.string().min(1).describe('Workspace-relative path of the audio file, e.g. uploads/meeting.mp3'),
  language: z
    .string()
    .regex(/^[a-z]{2,3}$/, 'an ISO-639-1 code such as "en" or "zh"')
    .optional()
    .describe('Language of the speech (ISO-639-1, e.g. "en"); improves accuracy when known'),
});
export type TranscribeAudioArgs = z.infer<typeof TranscribeAudioArgs>;

export interface TranscribeAudioOptions {
  /** STT_* endpoint; undefined when STT_MODEL is unset: the tool is then off. */
  endpoint: AudioEndpoint | undefined;
  /** STT_MAX_FILE_BYTES: largest audio file sent (OpenAI accepts 25 MB). */
  maxFileBytes: number;
}

export const STT_OFF_MESSAGE =
  'Transcription is off on this server: no transcription model is configured (the operator sets STT_MODEL, and STT_BASE_URL / STT_API_KEY).';

/** A transcript (JSON `{text}`) is far smaller than this. */
const MAX_TRANSCRIPT_RESPONSE_BYTES = 4 * 1024 * 1024;

/**
 * transcribe_audio (seed 003): a workspace audio file → text through an OpenAI-compatible
 * `POST {STT_BASE_URL}/audio/transcriptions` (multipart). Off (disabled, and saying so) without STT_MODEL.
 */
export function createTranscribeAudioTool(opts: TranscribeAudioOptions): ToolDefinition<typeof TranscribeAudioArgs> {
  const { endpoint } = opts;
  return defineTool({
    name: 'transcribe_audio',
    description: endpoint
      ? `Transcribe an audio file from the workspace (mp3, wav, m4a, ogg, webm, flac; up to ${opts.maxFileBytes} bytes) into text.`
      : 'Transcribe audio (off on this server: no transcription model is configured).',
    schema: TranscribeAudioArgs,
    metadata: {
      category: 'media',
      tags: ['audio', 'speech', 'read'],
      idempotent: true,
      displayName: 'Transcribe Audio',
      availableToSubagent: false,
      enabled: endpoint !== undefined,
    },
    async execute(args, ctx) {
      if (!endpoint) throw new ToolError('UNAVAILABLE', STT_OFF_MESSAGE, { retryable: false });
      const file = await readWorkspaceFile(ctx, args.file_path, opts.maxFileBytes);
      const fields: Record<string, string> = { model: endpoint.model, response_format: 'json', ...(args.language ? { language: args.language } : {}) };
      const form = multipart(fields, { name: path.posix.basename(file.relative), data: file.data });
      const res = await callProvider(endpoint, {
        label: 'transcription endpoint',
        url: audioUrl(endpoint, 'transcriptions'),
        method: 'POST',
        headers: { 'content-type': form.contentType, accept: 'application/json', ...authHeaders(endpoint) },
        body: form.body,
        maxResponseBytes: MAX_TRANSCRIPT_RESPONSE_BYTES,
        signal: ctx.signal,
      });
      const body = providerJson(res, 'transcription endpoint') as { text?: unknown };
      if (typeof body.text !== 'string') throw new ToolError('TOOL_FAILED', 'The transcription endpoint sent an answer without a "text" field');
      const text = body.text.trim();
      return text === '' ? `No speech was recognized in ${file.relative}.` : text;
    },
  });
}

/** multipart/form-data with text fields and one file part named "file". */
function multipart(fields: Record<string, string>, file: { name: string; data: Buffer }): { contentType: string; body: Buffer } {
  const boundary = `----agentloop-${randomBytes(12).toString('hex')}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  // Servers pick the decoder from the extension: keep it, make the rest of the name header-safe.
  const safeName = file.name.replace(/[^\w.-]/g, '_');
  parts.push(
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${safeName}"\r\nContent-Type: ${audioMimeType(file.name)}\r\n\r\n`),
    file.data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  );
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat(parts) };
}
