import { describe, expect, it } from 'vitest';
import { ApprovalRules } from './rules.js';
import { DEFAULT_RULES_PATH } from './config.js';

const RULES = `
global:
  default_action: allow
  risk_patterns:
    critical:
      patterns: ["password\\\\s*[=:]"]
      action: require_approval
      reason: "Secret in the arguments"
    high:
      patterns: ["DROP\\\\s+TABLE"]
      action: deny
      reason: "Destructive SQL"
tools:
  http_fetch:
    patterns:
      high_risk: ["192\\\\.168\\\\."]
      medium_risk: ["api\\\\."]
    actions:
      high_risk: deny
      medium_risk: require_approval
  sql_query:
    enabled: false
    patterns:
      high_risk: ["DELETE"]
`;

describe('ApprovalRules (four layers, first match decides)', () => {
  const rules = ApprovalRules.parse(RULES);

  it('layer 1: tool checkers decide first (http_fetch POST, write_file over uploads/, shell commands)', () => {
    expect(rules.check('http_fetch', { url: 'https://example.com/x', method: 'POST' })).toMatchObject({ action: 'require_approval', risk: 'medium', rule: 'checker:http_fetch' });
    expect(rules.check('write_file', { file_path: 'uploads/report.pdf', content: 'x' })).toMatchObject({ action: 'require_approval', rule: 'checker:write_file' });
    expect(rules.check('run_bash_command', { command: 'rm -rf /tmp/*' })).toMatchObject({ action: 'require_approval', risk: 'high', reason: 'High-risk command: rm -rf' });
    expect(rules.check('run_bash_command', { command: 'ls -la' })).toMatchObject({ action: 'allow', rule: 'checker:run_bash_command' });
    expect(rules.check('run_bash_command', { command: 'ls; curl evil' })).toMatchObject({ action: 'require_approval', risk: 'medium' });
  });

  it('layer 2: global patterns look into every nested string and key', () => {
    expect(rules.check('write_file', { file_path: 'outputs/a.txt', content: { nested: ['x', 'password = hunter2'] } })).toMatchObject({
      action: 'require_approval',
      risk: 'critical',
      rule: 'global:critical',
      reason: expect.stringContaining('Secret in the arguments'),
    });
    expect(rules.check('anything', { q: 'drop   table users' })).toMatchObject({ action: 'deny', rule: 'global:high' });
  });

  it('layer 3: per-tool patterns, highest level first; a disabled tool entry is skipped', () => {
    expect(rules.check('http_fetch', { url: 'http://192.168.1.1/' })).toMatchObject({ action: 'deny', rule: 'tool:http_fetch:high_risk' });
    expect(rules.check('http_fetch', { url: 'https://api.example.com/' })).toMatchObject({ action: 'require_approval', rule: 'tool:http_fetch:medium_risk' });
    expect(rules.check('sql_query', { q: 'DELETE FROM x' })).toMatchObject({ action: 'allow', rule: 'default' });
  });

  it('layer 4: the default action', () => {
    expect(rules.check('now', {})).toEqual({ action: 'allow', reason: '', risk: 'unspecified', rule: 'default' });
    expect(ApprovalRules.parse('global: { default_action: deny }').check('now', {})).toMatchObject({ action: 'deny', rule: 'default' });
  });

  it('checkers can be switched off, and approval as a whole', () => {
    const off = ApprovalRules.parse('checkers: { http_fetch: false }');
    expect(off.check('http_fetch', { method: 'POST', url: 'https://x' })).toMatchObject({ action: 'allow', rule: 'default' });
    expect(ApprovalRules.parse('global: { enable_approval: false }').check('run_bash_command', { command: 'sudo rm -rf /' })).toMatchObject({ action: 'allow', rule: 'disabled' });
  });

  it('refuses a bad file with the path of the problem', () => {
    expect(() => ApprovalRules.parse('global: { default_action: maybe }')).toThrow(/global\.default_action/);
    expect(() => ApprovalRules.parse('tools: { x: { patterns: { high_risk: ["("] } } }')).toThrow(/tools\.x\.patterns\.high_risk\[0\]: invalid regular expression/);
    expect(() => ApprovalRules.parse('unknown_key: 1')).toThrow(/hitl_rules\.yaml is invalid/);
  });

  it('the shipped rules load and catch secrets in arguments', async () => {
    const shipped = await ApprovalRules.load(DEFAULT_RULES_PATH);
    expect(shipped.check('write_file', { file_path: 'outputs/cfg.env', content: 'API_KEY=abc123' })).toMatchObject({ action: 'require_approval', rule: 'global:critical' });
    expect(shipped.check('read_file', { file_path: 'uploads/a.pdf' })).toMatchObject({ action: 'allow' });
  });
});
