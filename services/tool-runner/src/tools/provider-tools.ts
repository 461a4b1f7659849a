import { z } from 'zod';
import { ConfigError } from '@agentloop/core';
import type { HostLookup } from '@agentloop/net';
import type { ToolRunnerConfig } from '../config.js';
import type { ToolDefinition } from '../registry.js';
import type { AudioEndpoint } from './audio-files.js';
import type { ProviderEndpoint } from './provider-request.js';
import { createTextToSpeechTool, type TextToSpeechOptions } from './text-to-speech.js';
import { createTranscribeAudioTool, type TranscribeAudioOptions } from './transcribe-audio.js';
import { createWebSearchTool, type WebSearchOptions } from './web-search.js';
import { braveProvider, searxngProvider, tavilyProvider, type WebSearchProvider, type WebSearchProviderName } from './web-search-providers.js';

/** Optional env text; empty or blank counts as unset (a `KEY=` line in an env file). */
export const envText = () =>
  z
    .string()
    .optional()
    .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

/** The tools backed by an external provider, each off (disabled, saying so) while unconfigured. */
export interface ProviderToolOptions {
  webSearch: WebSearchOptions;
  textToSpeech: TextToSpeechOptions;
  transcribeAudio: TranscribeAudioOptions;
}

export function providerTools(opts: ProviderToolOptions): ToolDefinition[] {
  return [createWebSearchTool(opts.webSearch), createTextToSpeechTool(opts.textToSpeech), createTranscribeAudioTool(opts.transcribeAudio)];
}

/**
 * Options from the environment (TOOL_PROVIDERS_ALLOW, WEB_SEARCH_*, TTS_*, STT_*).
 * @throws ConfigError when WEB_SEARCH_PROVIDER names a provider that is not configured.
 */
export function providerToolOptions(config: ToolRunnerConfig, lookup?: HostLookup): ProviderToolOptions {
  const net = (timeoutMs: number): ProviderEndpoint => ({ allow: config.TOOL_PROVIDERS_ALLOW, timeoutMs, ...(lookup ? { lookup } : {}) });
  const audio = (model: string | undefined, baseUrl: string, apiKey: string | undefined, timeoutMs: number): AudioEndpoint | undefined =>
    model === undefined ? undefined : { ...net(timeoutMs), baseUrl, model, ...(apiKey ? { apiKey } : {}) };
  return {
    webSearch: { provider: webSearchProvider(config, net(config.WEB_SEARCH_TIMEOUT_MS)), maxResults: config.WEB_SEARCH_MAX_RESULTS },
    textToSpeech: {
      endpoint: audio(config.TTS_MODEL, config.TTS_BASE_URL, config.TTS_API_KEY, config.TTS_TIMEOUT_MS),
      defaultVoice: config.TTS_VOICE,
      maxInputChars: config.TTS_MAX_INPUT_CHARS,
      maxAudioBytes: config.TTS_MAX_AUDIO_BYTES,
    },
    transcribeAudio: {
      endpoint: audio(config.STT_MODEL, config.STT_BASE_URL, config.STT_API_KEY, config.STT_TIMEOUT_MS),
      maxFileBytes: config.STT_MAX_FILE_BYTES,
    },
  };
}

function webSearchProvider(config: ToolRunnerConfig, endpoint: ProviderEndpoint): WebSearchProvider | undefined {
  const configured: Partial<Record<WebSearchProviderName, () => WebSearchProvider>> = {};
  if (config.WEB_SEARCH_SEARXNG_URL) {
    const url = config.WEB_SEARCH_SEARXNG_URL;
    configured.searxng = () => searxngProvider(url, endpoint);
  }
  if (config.WEB_SEARCH_BRAVE_API_KEY) {
    const key = config.WEB_SEARCH_BRAVE_API_KEY;
    configured.brave = () => braveProvider(key, config.WEB_SEARCH_BRAVE_URL, endpoint);
  }
  if (config.WEB_SEARCH_TAVILY_API_KEY) {
    const key = config.WEB_SEARCH_TAVILY_API_KEY;
    configured.tavily = () => tavilyProvider(key, config.WEB_SEARCH_TAVILY_URL, endpoint);
  }
  const chosen = config.WEB_SEARCH_PROVIDER;
  if (chosen) {
    const make = configured[chosen];
    if (!make) {
      const needs = { searxng: 'WEB_SEARCH_SEARXNG_URL', brave: 'WEB_SEARCH_BRAVE_API_KEY', tavily: 'WEB_SEARCH_TAVILY_API_KEY' }[chosen];
      throw new ConfigError(`WEB_SEARCH_PROVIDER: "${chosen}" is chosen but ${needs} is not set`);
    }
    return make();
  }
  // Unset: the first configured, self-hosted SearXNG before the paid APIs.
  return (configured.searxng ?? configured.brave ?? configured.tavily)?.();
}
