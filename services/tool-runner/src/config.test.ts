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
    expect(() => loadToolRunnerConfig({ TEXT_FILE_MAX_BYTES: '100', TEXT_PREVIEW_BYTES: '200' })).toThrow(
      'TEXT_PREVIEW_BYTES: must not exceed TEXT_FILE_MAX_BYTES',
    );
  });

  it('splits TOOLS_DIRS on commas and defaults the tool settings', () => {
    const c = loadToolRunnerConfig({ TOOLS_DIRS: ' ./tools , /opt/tools ,' });
    expect(c.TOOLS_DIRS).toEqual(['./tools', '/opt/tools']);
    expect(loadToolRunnerConfig({})).toMatchObject({ TOOLS_DIRS: [], TOOLS_WATCH: false, HTTP_FETCH_MAX_BYTES: 1_048_576, HTTP_FETCH_TIMEOUT_MS: 15_000 });
    expect(loadToolRunnerConfig({}).TOOLS_CONFIG).toBeUndefined();
  });

  it('parses HTTP_FETCH_ALLOW and stops on a bad entry, naming it', () => {
    expect(loadToolRunnerConfig({ HTTP_FETCH_ALLOW: '127.0.0.1:8080,10.0.0.0/8' }).HTTP_FETCH_ALLOW.map((e) => e.text)).toEqual([
      '127.0.0.1:8080',
      '10.0.0.0/8',
    ]);
    expect(() => loadToolRunnerConfig({ HTTP_FETCH_ALLOW: '10.0.0.0/40' })).toThrow(
      'HTTP_FETCH_ALLOW: Invalid HTTP_FETCH_ALLOW entry "10.0.0.0/40": prefix length must be 0-32',
    );
  });
});
