import { z } from 'zod';
import { envBaseUrl, envBool, envInt, parseConfig } from '@agentloop/core';
import { envAllowList } from '@agentloop/net';
import { sandboxConfigFromEnv, type SandboxConfig } from '@agentloop/sandbox';
import { envText } from './tools/provider-tools.js';
import { BRAVE_DEFAULT_URL, TAVILY_DEFAULT_URL, WEB_SEARCH_PROVIDERS } from './tools/web-search-providers.js';

/** Environment of the tool-runner, validated once at boot. */
export const ToolRunnerEnv = z
  .object({
    NATS_URL: z.string().optional(),
    LOG_LEVEL: z.string().default('info'),
    /** Root of `<tenant>/<thread>/` workspaces; a shared volume when several replicas run. */
    WORKSPACE_ROOT: z.string().min(1).default('./data/workspaces'),
    /**
     * Folder of installed skills. Symlinks under a workspace's skills/ may point into it
     * (read-only); any other symlink leaving the workspace is refused. Unset: none may.
     */
    SKILLS_ROOT: z.string().min(1).optional(),
    /** Registers debug_sleep and debug_fail (end-to-end tests). */
    TOOLS_ENABLE_DEBUG: envBool(false),
    /** Deadline of one request to the indexer (document read/search). */
    INDEXER_TIMEOUT_MS: envInt(120_000, 100, 3_600_000),
    /** read_file returns text files smaller than this in full (seed 001: 100 KB). */
    TEXT_FILE_MAX_BYTES: envInt(102_400, 1, 1_073_741_824),
    /** ...and the first this-many bytes of larger ones (seed 001: 50 KB). */
    TEXT_PREVIEW_BYTES: envInt(51_200, 1, 1_073_741_824),
    /** Largest content one write_file call accepts. */
    WRITE_MAX_BYTES: envInt(10 * 1024 * 1024, 1, 1_073_741_824),
    /** find_files lists at most this many matches (newest first). */
    FIND_MAX_RESULTS: envInt(200, 1, 100_000),
    /** Budget of a tool call whose request carries no deadline. */
    TOOL_DEFAULT_TIMEOUT_MS: envInt(60_000, 10, 86_400_000),
    /** tools.yaml (core / optional sections). Unset: config/tools.yaml shipped with this package. */
    TOOLS_CONFIG: z.string().min(1).optional(),
    /** Comma-separated folders scanned for custom tool modules (.js/.mjs; .ts when running from source). */
    TOOLS_DIRS: z
      .string()
      .optional()
      .transform((v) =>
        (v ?? '')
          .split(',')
          .map((d) => d.trim())
          .filter((d) => d !== ''),
      ),
    /** Re-scan the tool folders and tools.yaml when they change (fs.watch, debounced). */
    TOOLS_WATCH: envBool(false),
    /** Quiet period after the last change before a watch-triggered reload. */
    TOOLS_WATCH_DEBOUNCE_MS: envInt(300, 10, 60_000),
    /** A tool module whose import has not settled after this long is skipped. */
    TOOLS_IMPORT_TIMEOUT_MS: envInt(10_000, 100, 600_000),
    /**
     * http_fetch: comma-separated exceptions to the private-address guard:
     * CIDRs or IPs (`10.1.0.0/16`, `127.0.0.1`, `[::1]`) or host names
     * (`api.internal`), each optionally with `:port` (`127.0.0.1:8080`,
     * `[fd00::1]:443`, `10.0.0.0/8:443`).
     */
    HTTP_FETCH_ALLOW: envAllowList('HTTP_FETCH_ALLOW'),
    /** http_fetch: largest response body read (decoded bytes); the rest is cut with a note. */
    HTTP_FETCH_MAX_BYTES: envInt(1024 * 1024, 1, 1_073_741_824),
    /** http_fetch: budget of one fetch, redirects included. */
    HTTP_FETCH_TIMEOUT_MS: envInt(15_000, 10, 600_000),
    // --- Provider-backed tools: web_search, text_to_speech, transcribe_audio (each off while unconfigured) ---
    /**
     * Exceptions to the private-address guard for the provider URLs below (same syntax as
     * HTTP_FETCH_ALLOW), e.g. `searxng:8080` or `10.0.0.0/8`. Model-chosen URLs never use it.
     */
    TOOL_PROVIDERS_ALLOW: envAllowList('TOOL_PROVIDERS_ALLOW'),
    /** searxng | brave | tavily; unset: the first configured, in that order. */
    WEB_SEARCH_PROVIDER: z.preprocess((v) => (v === '' ? undefined : v), z.enum(WEB_SEARCH_PROVIDERS).optional()),
    /** SearXNG instance (its JSON format enabled), e.g. http://searxng:8080. */
    WEB_SEARCH_SEARXNG_URL: envBaseUrl(),
    WEB_SEARCH_BRAVE_API_KEY: envText(),
    /** Overridable for tests and proxies. */
    WEB_SEARCH_BRAVE_URL: envBaseUrl().transform((v) => v ?? BRAVE_DEFAULT_URL),
    WEB_SEARCH_TAVILY_API_KEY: envText(),
    WEB_SEARCH_TAVILY_URL: envBaseUrl().transform((v) => v ?? TAVILY_DEFAULT_URL),
    /** Upper bound of web_search's max_results. */
    WEB_SEARCH_MAX_RESULTS: envInt(10, 1, 50),
    WEB_SEARCH_TIMEOUT_MS: envInt(15_000, 100, 600_000),
    /** text_to_speech: on when set; OpenAI-compatible `POST {TTS_BASE_URL}/audio/speech`. */
    TTS_MODEL: envText(),
    TTS_BASE_URL: envBaseUrl().transform((v) => v ?? 'https://api.openai.com/v1'),
    TTS_API_KEY: envText(),
    TTS_VOICE: envText().transform((v) => v ?? 'alloy'),
    TTS_TIMEOUT_MS: envInt(60_000, 100, 600_000),
    TTS_MAX_INPUT_CHARS: envInt(4_096, 1, 1_000_000),
    TTS_MAX_AUDIO_BYTES: envInt(25 * 1024 * 1024, 1, 1_073_741_824),
    /** transcribe_audio: on when set; OpenAI-compatible `POST {STT_BASE_URL}/audio/transcriptions`. */
    STT_MODEL: envText(),
    STT_BASE_URL: envBaseUrl().transform((v) => v ?? 'https://api.openai.com/v1'),
    STT_API_KEY: envText(),
    STT_TIMEOUT_MS: envInt(120_000, 100, 3_600_000),
    STT_MAX_FILE_BYTES: envInt(25 * 1024 * 1024, 1, 1_073_741_824),
    // --- end of provider-backed tools ---
  })
  .refine((c) => c.TEXT_PREVIEW_BYTES <= c.TEXT_FILE_MAX_BYTES, {
    path: ['TEXT_PREVIEW_BYTES'],
    message: 'must not exceed TEXT_FILE_MAX_BYTES',
  });
export type ToolRunnerConfig = z.infer<typeof ToolRunnerEnv> & {
  /** python_analyser / run_bash_command: SANDBOX_* variables (libs/sandbox limits.ts). Absent: the defaults. */
  sandbox?: SandboxConfig;
};

/** Parses the tool-runner's environment; throws a ConfigError naming each bad variable. */
export function loadToolRunnerConfig(env: NodeJS.ProcessEnv = process.env): ToolRunnerConfig {
  return { ...parseConfig(ToolRunnerEnv, env), sandbox: sandboxConfigFromEnv(env) };
}
