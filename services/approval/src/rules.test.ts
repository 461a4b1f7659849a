import { describe, expect, it } from 'vitest';
import { ConfigError } from '@agentloop/core';
import { ApprovalRules, MAX_SCANNED_CHARS } from './rules.js';
import { DEFAULT_RULES_PATH } from './config.js';

const RULES = String.raw`
global:
  default_action: allow
  risk_patterns:
    critical:
      patterns: ['password\s*[=:]']
      action: require_approval
      reason: "Secret in the arguments"
    high:
      patterns: ['DROP\s+TABLE']
      action: deny
      reason: "Destructive SQL"
    low:
      patterns: ['lorem']
      action: allow
tools:
  http_fetch:
    patterns:
      high_risk: ['192\.168\.']
      medium_risk: ['api\.']
    actions:
      high_risk: deny
      medium_risk: require_approval
  search:
    patterns:
      high_risk: ['classified']
      low_risk: ['weather']
    actions:
      low_risk: allow
  sql_query:
    enabled: false
    patterns:
      high_risk: ['DELETE']
`;

describe('ApprovalRules: four layers, the first with an opinion decides', () => {
  const rules = ApprovalRules.parse(RULES);

  it('layer 1: a tool checker decides with rule checker:<tool>', () => {
    expect(rules.check('http_fetch', { url: 'https://example.com/x', method: 'POST' })).toEqual({
      action: 'require_approval',
      risk: 'medium',
      reason: 'http_fetch POST may change data on example.com',
      rule: 'checker:http_fetch',
    });
    expect(rules.check('run_bash_command', { command: 'ls -la' })).toMatchObject({ action: 'allow', rule: 'checker:run_bash_command' });
  });

  it('layer 1 comes before layer 2: the checker decides even when a global pattern matches too', () => {
    expect(rules.check('run_bash_command', { command: 'sudo mysql -e "DROP TABLE users"' })).toMatchObject({ action: 'require_approval', risk: 'high', rule: 'checker:run_bash_command' });
  });

  it('a checker with no opinion falls through to the next layers', () => {
    // http_fetch GET of a public host: no checker opinion → the tool's medium pattern.
    expect(rules.check('http_fetch', { url: 'https://api.example.com/v1' })).toMatchObject({ action: 'require_approval', rule: 'tool:http_fetch:medium_risk' });
    // write_file into outputs/: no checker opinion → the global critical pattern.
    expect(rules.check('write_file', { file_path: 'outputs/a.env', content: 'password=hunter2' })).toMatchObject({ rule: 'global:critical' });
  });

  it('layer 2: global patterns look into nested objects, arrays and keys', () => {
    expect(rules.check('anything', { a: { b: [1, { c: 'x', d: ['password: hunter2'] }] } })).toMatchObject({
      action: 'require_approval',
      risk: 'critical',
      rule: 'global:critical',
      reason: 'Secret in the arguments (pattern password\\s*[=:])',
    });
    expect(rules.check('anything', { 'password=hunter2': true })).toMatchObject({ rule: 'global:critical' });
  });

  it('layer 2: levels are tried critical first, and matching is case-insensitive', () => {
    expect(rules.check('anything', { q: 'drop   table users', note: 'PASSWORD = x' })).toMatchObject({ rule: 'global:critical' });
    expect(rules.check('anything', { q: 'drop   table users' })).toEqual({ action: 'deny', risk: 'high', reason: 'Destructive SQL (pattern DROP\\s+TABLE)', rule: 'global:high' });
  });

  it('layer 2 comes before layer 3', () => {
    expect(rules.check('http_fetch', { url: 'https://api.example.com/?password=1' })).toMatchObject({ rule: 'global:critical' });
  });

  it('layer 3: the tool patterns, high before medium before low, on the arguments as JSON', () => {
    expect(rules.check('http_fetch', { url: 'https://api.192.168.example/' })).toEqual({
      action: 'deny',
      risk: 'high',
      reason: 'http_fetch: high-risk pattern 192\\.168\\.',
      rule: 'tool:http_fetch:high_risk',
    });
    expect(rules.check('search', { q: 'weather and classified' })).toMatchObject({ rule: 'tool:search:high_risk' });
    expect(rules.check('search', { q: 'weather' })).toMatchObject({ action: 'allow', risk: 'low', rule: 'tool:search:low_risk' });
  });

  it('layer 3: a tool entry with enabled: false is skipped', () => {
    expect(rules.check('sql_query', { q: 'DELETE FROM x' })).toMatchObject({ action: 'allow', rule: 'default' });
  });

  it('layer 4: global.default_action when nothing matched', () => {
    expect(rules.check('now', {})).toEqual({ action: 'allow', reason: 'No rule matched (default action: allow)', risk: 'unspecified', rule: 'default' });
    expect(ApprovalRules.parse('global: { default_action: deny }').check('now', {})).toMatchObject({ action: 'deny', rule: 'default' });
    // The seed's spelling "prompt" means require_approval.
    expect(ApprovalRules.parse('global: { default_action: prompt }').check('now', {})).toMatchObject({ action: 'require_approval', rule: 'default' });
  });

  it('an empty file means the built-in checkers and allow', () => {
    const empty = ApprovalRules.parse('');
    expect(empty.check('now', { q: 'password=x' })).toMatchObject({ action: 'allow', rule: 'default' });
    expect(empty.check('write_file', { file_path: 'uploads/a', content: '' })).toMatchObject({ rule: 'checker:write_file' });
  });

  it('global.enable_approval: false allows everything', () => {
    expect(ApprovalRules.parse('global: { enable_approval: false }').check('run_bash_command', { command: 'sudo rm -rf /' })).toMatchObject({ action: 'allow', rule: 'disabled' });
  });

  it('checkers can be switched off (and http_fetch configured) in the file', () => {
    const off = ApprovalRules.parse('checkers: { http_fetch: false, write_file: { enabled: false } }');
    expect(off.check('http_fetch', { method: 'POST', url: 'https://x.example' })).toMatchObject({ action: 'allow', rule: 'default' });
    expect(off.check('write_file', { file_path: 'uploads/a', content: '' })).toMatchObject({ rule: 'default' });
    const hosts = ApprovalRules.parse('checkers: { http_fetch: { high_risk_hosts: ["*.corp.example"] } }');
    expect(hosts.check('http_fetch', { url: 'https://wiki.corp.example/' })).toMatchObject({ risk: 'high', rule: 'checker:http_fetch' });
  });

  it('custom checkers from code are added, may replace a built-in, and a throwing one fails closed', () => {
    const r = ApprovalRules.parse('', 'rules', {
      deploy: (args) => (args.env === 'prod' ? { action: 'deny', risk: 'critical', reason: 'no prod deploys' } : undefined),
      write_file: () => undefined,
      broken: () => {
        throw new Error('boom');
      },
    });
    expect(r.check('deploy', { env: 'prod' })).toMatchObject({ action: 'deny', rule: 'checker:deploy' });
    expect(r.check('deploy', { env: 'dev' })).toMatchObject({ action: 'allow', rule: 'default' });
    expect(r.check('write_file', { file_path: 'uploads/a', content: '' })).toMatchObject({ rule: 'default' });
    expect(r.check('broken', {})).toMatchObject({ action: 'require_approval', risk: 'high', rule: 'checker:broken', reason: expect.stringContaining('boom') });
  });

  it(`examines each value up to ${MAX_SCANNED_CHARS} characters`, () => {
    const pad = 'x'.repeat(MAX_SCANNED_CHARS);
    expect(rules.check('anything', { v: `password=1${pad}` })).toMatchObject({ rule: 'global:critical' });
    expect(rules.check('anything', { v: `${pad}password=1` })).toMatchObject({ rule: 'default' });
  });
});

describe('rules file validation', () => {
  it('names the setting that is wrong', () => {
    expect(() => ApprovalRules.parse('global: { default_action: maybe }')).toThrow(/hitl_rules\.yaml is invalid: global\.default_action/);
    expect(() => ApprovalRules.parse('tools: { x: { patterns: { high_risk: ["("] } } }')).toThrow(/tools\.x\.patterns\.high_risk\[0\]: invalid regular expression/);
    expect(() => ApprovalRules.parse('global: { risk_patterns: { severe: { patterns: [x] } } }')).toThrow(/global\.risk_patterns/);
    expect(() => ApprovalRules.parse('checkers: { http_fetch: { high_risk_hosts: ["http://x"] } }')).toThrow(/checkers\.http_fetch/);
    expect(() => ApprovalRules.parse('unknown_key: 1')).toThrow(/hitl_rules\.yaml is invalid/);
    expect(() => ApprovalRules.parse('global: [')).toThrow(/is not valid YAML/);
  });

  it('reports problems as ConfigError (the process does not start)', async () => {
    expect(() => ApprovalRules.parse('global: { enable_approval: "sometimes" }')).toThrow(ConfigError);
    await expect(ApprovalRules.load('/nonexistent/hitl_rules.yaml')).rejects.toThrow(/HITL_RULES: cannot read \/nonexistent\/hitl_rules\.yaml/);
  });
});

describe('the shipped hitl_rules.yaml', () => {
  it('loads, catches secrets and risky calls, and allows ordinary ones', async () => {
    const shipped = await ApprovalRules.load(DEFAULT_RULES_PATH);
    expect(shipped.check('write_file', { file_path: 'outputs/cfg.env', content: 'API_KEY=abc123' })).toMatchObject({ action: 'require_approval', rule: 'global:critical' });
    expect(shipped.check('http_fetch', { url: 'http://10.0.0.1/' })).toMatchObject({ risk: 'high', rule: 'checker:http_fetch' });
    expect(shipped.check('http_fetch', { url: 'https://metadata.google.internal/' })).toMatchObject({ risk: 'high', rule: 'checker:http_fetch' });
    expect(shipped.check('read_file', { file_path: 'uploads/a.pdf' })).toMatchObject({ action: 'allow', rule: 'default' });
    expect(shipped.check('http_fetch', { url: 'https://example.com/' })).toMatchObject({ action: 'allow' });
  });
});
