import { ConfigError } from '@agentloop/core';
import { describe, expect, it } from 'vitest';
import { loadToolRunnerConfig } from './config.js';

describe('loadToolRunnerConfig', () => {
  it('applies the seed defaults', () => {
    expect(loadToolRunnerConfig({})).toMatchObject({
      WORKSPACE_ROOT: './data/workspaces',
      TOOLS_ENABLE_DEBUG: false,
      TEXT_FILE_MAX_BYTES: 102_400,
      TEXT_PREVIEW_BYTES: 51_200,
      WRITE_MAX_BYTES: 10 * 1024 * 1024,
      FIND_MAX_RESULTS: 200,
      TOOL_DEFAULT_TIMEOUT_MS: 60_000,
    });
  });

  it('reads booleans and integers from the environment', () => {
    const c = loadToolRunnerConfig({ TOOLS_ENABLE_DEBUG: 'true', TEXT_FILE_MAX_BYTES: '2048', TEXT_PREVIEW_BYTES: '1024' });
    expect(c.TOOLS_ENABLE_DEBUG).toBe(true);
    expect(c.TEXT_FILE_MAX_BYTES).toBe(2048);
  });

  it('names a bad variable', () => {
    expect(() => loadToolRunnerConfig({ WRITE_MAX_BYTES: 'lots' })).toThrow(ConfigError);
    expect(() => loadToolRunnerConfig({ WRITE_MAX_BYTES: 'lots' })).toThrow('WRITE_MAX_BYTES');
  });

  it('refuses a preview larger than the full-read limit', () => {
    expect(() => loadToolRunnerConfig({ TEXT_FILE_MAX_BYTES: '100', TEXT_PREVIEW_BYTES: '200' })).toThrow('TEXT_PREVIEW_BYTES: must not exceed TEXT_FILE_MAX_BYTES');
  });
});
