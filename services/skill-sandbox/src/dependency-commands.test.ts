import { describe, expect, it } from 'vitest';
import { installerEnv, installFailure } from './dependency-commands.js';
import type { ProcessResult } from './runner.js';

const failed = (stderr: string, stdout = ''): ProcessResult => ({
  exitCode: 1,
  signal: null,
  stdout,
  stderr,
  timedOut: false,
  stdoutTruncated: false,
  stderrTruncated: false,
});

describe('installFailure', () => {
  it('says the index cannot be reached (offline) and which settings to change', () => {
    const why = installFailure(
      failed(
        'WARNING: Retrying ... NewConnectionError(... Failed to establish a new connection: [Errno -2] Name or service not known)\nERROR: Could not find a version that satisfies the requirement pypdf (from versions: none)\nERROR: No matching distribution found for pypdf',
      ),
      'pip',
      120_000,
    );
    expect(why).toBe(
      'the package index cannot be reached (offline?); configure the index for the skill sandbox (PIP_INDEX_URL, PIP_EXTRA_INDEX_URL, PIP_FIND_LINKS or a pip.conf): ' +
        'ERROR: Could not find a version that satisfies the requirement pypdf (from versions: none) ERROR: No matching distribution found for pypdf',
    );
  });

  it('tells a missing package from an unreachable registry, for npm too', () => {
    expect(installFailure(failed('npm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/nope'), 'npm', 1000)).toMatch(
      /^a package is not available from the configured registry; configure the registry for the skill sandbox \(NPM_CONFIG_REGISTRY or an \.npmrc\)/,
    );
    expect(installFailure(failed('npm error code EAI_AGAIN\nnpm error request to https://registry.npmjs.org/x failed'), 'npm', 1000)).toMatch(
      /^the package registry cannot be reached \(offline\?\)/,
    );
    expect(installFailure({ ...failed(''), timedOut: true, exitCode: null }, 'pip', 120_000)).toBe('pip did not finish within 120 s');
    expect(installFailure(failed('ERROR: boom'), 'pip', 1000)).toBe('pip exited 1: ERROR: boom');
  });
});

describe('installerEnv', () => {
  it("passes pip's and npm's own settings and the proxies, nothing else of the service's environment", () => {
    const source = {
      PIP_INDEX_URL: 'https://pypi.example/simple',
      NPM_CONFIG_REGISTRY: 'https://npm.example',
      HTTPS_PROXY: 'http://proxy:3128',
      SECRET_TOKEN: 'x',
      HOME: '/nonexistent-home',
    };
    const pip = installerEnv({ home: '/tmp/h', timeoutMs: 1, env: source }, '/usr/bin', 'pip');
    expect(pip).toMatchObject({ PIP_INDEX_URL: 'https://pypi.example/simple', HTTPS_PROXY: 'http://proxy:3128', HOME: '/tmp/h' });
    expect(pip.NPM_CONFIG_REGISTRY).toBeUndefined();
    expect(pip.SECRET_TOKEN).toBeUndefined();
    const npm = installerEnv({ home: '/tmp/h', timeoutMs: 1, env: source }, '/usr/bin', 'npm');
    expect(npm).toMatchObject({ NPM_CONFIG_REGISTRY: 'https://npm.example', HTTPS_PROXY: 'http://proxy:3128' });
    expect(npm.PIP_INDEX_URL).toBeUndefined();
    expect(npm.SECRET_TOKEN).toBeUndefined();
  });
});
