import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { envTenantNumbers, parseConfig } from './config.js';

const Env = z.object({ TENANT_WEIGHTS: envTenantNumbers('TENANT_WEIGHTS', 1, 100) });

describe('envTenantNumbers', () => {
  it('parses tenant=integer pairs; unset is an empty map', () => {
    expect(parseConfig(Env, { TENANT_WEIGHTS: ' acme=3, globex=1 ,' }).TENANT_WEIGHTS).toEqual(
      new Map([
        ['acme', 3],
        ['globex', 1],
      ]),
    );
    expect(parseConfig(Env, {}).TENANT_WEIGHTS.size).toBe(0);
  });

  it('names the variable and the item that is out of range or malformed', () => {
    expect(() => parseConfig(Env, { TENANT_WEIGHTS: 'acme=0' })).toThrow(/TENANT_WEIGHTS: "acme=0" is not tenant=integer with the integer in 1\.\.100/);
    expect(() => parseConfig(Env, { TENANT_WEIGHTS: 'acme=101' })).toThrow(/"acme=101"/);
    expect(() => parseConfig(Env, { TENANT_WEIGHTS: 'acme:3' })).toThrow(/"acme:3"/);
  });
});
