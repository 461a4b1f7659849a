import { describe, expect, it } from 'vitest';
import { ConfigError } from '@agentloop/core';
import { ApprovalRules, MAX_SCANNED_CHARS, MAX_SCANNED_DEPTH, MAX_SCANNED_VALUES } from './rules.js';
import { SCAN_CHUNK_CHARS } from './scan.js';
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

  it('layer 1: a tool checker decides with rule checker:<tool>', async () => {
    expect(await rules.check('http_fetch', { url: 'https://example.com/x', method: 'POST' })).toEqual({
      action: 'require_approval',
      risk: 'medium',
      reason: 'http_fetch POST may change data on example.com',
      rule: 'checker:http_fetch',
    });
    expect(await rules.check('run_bash_command', { command: 'ls -la' })).toMatchObject({ action: 'allow', rule: 'checker:run_bash_command' });
  });

  it('layer 1 comes before layer 2: the checker decides even when a global pattern matches too', async () => {
    expect(await rules.check('run_bash_command', { command: 'sudo mysql -e "DROP TABLE users"' })).toMatchObject({
      action: 'require_approval',
      risk: 'high',
      rule: 'checker:run_bash_command',
    });
  });

  it('a checker with no opinion falls through to the next layers', async () => {
    // http_fetch GET of a public host: no checker opinion → the tool's medium pattern.
    expect(await rules.check('http_fetch', { url: 'https://api.example.com/v1' })).toMatchObject({
      action: 'require_approval',
      rule: 'tool:http_fetch:medium_risk',
    });
    // write_file into outputs/: no checker opinion → the global critical pattern.
    expect(await rules.check('write_file', { file_path: 'outputs/a.env', content: 'password=hunter2' })).toMatchObject({ rule: 'global:critical' });
  });

  it('layer 2: global patterns look into nested objects, arrays and keys', async () => {
    expect(await rules.check('anything', { a: { b: [1, { c: 'x', d: ['password: hunter2'] }] } })).toMatchObject({
      action: 'require_approval',
      risk: 'critical',
      rule: 'global:critical',
      reason: 'Secret in the arguments (pattern password\\s*[=:])',
    });
    expect(await rules.check('anything', { 'password=hunter2': true })).toMatchObject({ rule: 'global:critical' });
  });

  it('layer 2: levels are tried critical first, and matching is case-insensitive', async () => {
    expect(await rules.check('anything', { q: 'drop   table users', note: 'PASSWORD = x' })).toMatchObject({ rule: 'global:critical' });
    expect(await rules.check('anything', { q: 'drop   table users' })).toEqual({
      action: 'deny',
      risk: 'high',
      reason: 'Destructive SQL (pattern DROP\\s+TABLE)',
      rule: 'global:high',
    });
  });

  it('layer 2 comes before layer 3', async () => {
    expect(await rules.check('http_fetch', { url: 'https://api.example.com/?password=1' })).toMatchObject({ rule: 'global:critical' });
  });

  it('layer 3: the tool patterns, high before medium before low, on the arguments as JSON', async () => {
    expect(await rules.check('http_fetch', { url: 'https://api.192.168.example/' })).toEqual({
      action: 'deny',
      risk: 'high',
      reason: 'http_fetch: high-risk pattern 192\\.168\\.',
      rule: 'tool:http_fetch:high_risk',
    });
    expect(await rules.check('search', { q: 'weather and classified' })).toMatchObject({ rule: 'tool:search:high_risk' });
    expect(await rules.check('search', { q: 'weather' })).toMatchObject({ action: 'allow', risk: 'low', rule: 'tool:search:low_risk' });
  });

  it('layer 3: a tool entry with enabled: false is skipped', async () => {
    expect(await rules.check('sql_query', { q: 'DELETE FROM x' })).toMatchObject({ action: 'allow', rule: 'default' });
  });

  it('layer 4: global.default_action when nothing matched', async () => {
    expect(await rules.check('now', {})).toEqual({ action: 'allow', reason: 'No rule matched (default action: allow)', risk: 'unspecified', rule: 'default' });
    expect(await ApprovalRules.parse('global: { default_action: deny }').check('now', {})).toMatchObject({ action: 'deny', rule: 'default' });
    // The seed's spelling "prompt" means require_approval.
    expect(await ApprovalRules.parse('global: { default_action: prompt }').check('now', {})).toMatchObject({ action: 'require_approval', rule: 'default' });
  });

  it('an empty file means the built-in checkers and allow', async () => {
    const empty = ApprovalRules.parse('');
    expect(await empty.check('now', { q: 'password=x' })).toMatchObject({ action: 'allow', rule: 'default' });
    expect(await empty.check('write_file', { file_path: 'uploads/a', content: '' })).toMatchObject({ rule: 'checker:write_file' });
  });

  it('global.enable_approval: false allows everything', async () => {
    expect(await ApprovalRules.parse('global: { enable_approval: false }').check('run_bash_command', { command: 'sudo rm -rf /' })).toMatchObject({
      action: 'allow',
      rule: 'disabled',
    });
  });

  it('checkers can be switched off (and http_fetch configured) in the file', async () => {
    const off = ApprovalRules.parse('checkers: { http_fetch: false, write_file: { enabled: false } }');
    expect(await off.check('http_fetch', { method: 'POST', url: 'https://x.example' })).toMatchObject({ action: 'allow', rule: 'default' });
    expect(await off.check('write_file', { file_path: 'uploads/a', content: '' })).toMatchObject({ rule: 'default' });
    const hosts = ApprovalRules.parse('checkers: { http_fetch: { high_risk_hosts: ["*.corp.example"] } }');
    expect(await hosts.check('http_fetch', { url: 'https://wiki.corp.example/' })).toMatchObject({ risk: 'high', rule: 'checker:http_fetch' });
  });

  it('custom checkers from code are added, may replace a built-in, and a throwing one fails closed', async () => {
    const r = ApprovalRules.parse('', 'rules', {
      deploy: (args) => (args.env === 'prod' ? { action: 'deny', risk: 'critical', reason: 'no prod deploys' } : undefined),
      write_file: () => undefined,
      broken: () => {
        throw new Error('boom');
      },
    });
    expect(await r.check('deploy', { env: 'prod' })).toMatchObject({ action: 'deny', rule: 'checker:deploy' });
    expect(await r.check('deploy', { env: 'dev' })).toMatchObject({ action: 'allow', rule: 'default' });
    expect(await r.check('write_file', { file_path: 'uploads/a', content: '' })).toMatchObject({ rule: 'default' });
    expect(await r.check('broken', {})).toMatchObject({
      action: 'require_approval',
      risk: 'high',
      rule: 'checker:broken',
      reason: expect.stringContaining('boom'),
    });
  });

  it('examines every string whole: a secret after 64 KB or 5 MB of padding is found', async () => {
    for (const size of [64 * 1024, 5 * 1024 * 1024]) {
      const pad = 'x'.repeat(size);
      expect(await rules.check('anything', { v: `${pad} password=1` }), `${size}`).toMatchObject({ rule: 'global:critical' });
      expect(await rules.check('anything', { v: `${pad} lorem` }), `${size}`).toMatchObject({ rule: 'global:low' });
      expect(await rules.check('anything', { v: pad }), `${size}`).toMatchObject({ rule: 'default' });
    }
  });

  it('finds a match that straddles two scan chunks', async () => {
    // Consecutive chunks overlap (SCAN_OVERLAP_CHARS): put the secret across the end of the first one.
    const before = 'x'.repeat(SCAN_CHUNK_CHARS - 4);
    expect(await rules.check('anything', { v: `${before}password=1` })).toMatchObject({ rule: 'global:critical' });
    expect(await rules.check('search', { q: `${before}classified` })).toMatchObject({ rule: 'tool:search:high_risk' });
  });

  it('layer 3 examines the whole JSON too', async () => {
    expect(await rules.check('search', { a: 'x'.repeat(300 * 1024), q: 'classified' })).toMatchObject({ rule: 'tool:search:high_risk' });
  });

  it(`sends arguments past the bounds (${MAX_SCANNED_CHARS} characters, ${MAX_SCANNED_DEPTH} levels, ${MAX_SCANNED_VALUES} strings) to a human`, async () => {
    const big = 'x'.repeat(MAX_SCANNED_CHARS / 2 + 1);
    expect(await rules.check('anything', { a: big, b: big })).toMatchObject({
      action: 'require_approval',
      risk: 'high',
      rule: 'limits',
      reason: expect.stringContaining('too large to examine'),
    });
    let deep: unknown = 'password=1';
    for (let i = 0; i < MAX_SCANNED_DEPTH + 1; i++) deep = [deep];
    expect(await rules.check('anything', { deep })).toMatchObject({ action: 'require_approval', rule: 'limits' });
    const many = Array.from({ length: MAX_SCANNED_VALUES + 1 }, () => 1);
    expect(await rules.check('anything', { many })).toMatchObject({ action: 'require_approval', rule: 'limits' });
    // Within the bounds: examined.
    deep = 'ok';
    for (let i = 0; i < MAX_SCANNED_DEPTH - 2; i++) deep = [deep];
    expect(await rules.check('anything', { deep })).toMatchObject({ rule: 'default' });
  });

  it('normalizes before scanning: zero-width and other invisible characters, fullwidth forms, combining marks', async () => {
    const spellings = [
      'pass\u200bword=hunter2', // zero-width space
      'pa\u200dss\u200cword=hunter2', // zero-width joiner / non-joiner
      '\ufeffpass\u00adword=hunter2', // BOM, soft hyphen
      'pass\u202eword=hunter2', // bidi override
      'pass\u2066word\u2069=hunter2', // bidi isolates
      'pas\ufe0fsword=hunter2', // variation selector
      'pass\u{e0041}word=hunter2', // tag character
      '\uff50\uff41\uff53\uff53\uff57\uff4f\uff52\uff44\uff1dhunter2', // fullwidth ｐａｓｓｗｏｒｄ＝
      'pa\u0301ssword=hunter2', // combining acute accent
      'PASSWORD=hunter2', // case
      'password\u00a0=\u3000hunter2', // no-break space, ideographic space
      '\u{1d429}\u{1d41a}\u{1d42c}\u{1d42c}\u{1d430}\u{1d428}\u{1d42b}\u{1d41d}=hunter2', // mathematical bold
    ];
    for (const v of spellings) {
      expect(await rules.check('write_file', { file_path: 'outputs/a.txt', content: v }), JSON.stringify(v)).toMatchObject({ rule: 'global:critical' });
    }
  });

  it('reads an object key with its value as an assignment ({"password": "…"})', async () => {
    expect(await rules.check('anything', { password: 'hunter2' })).toMatchObject({ rule: 'global:critical' });
    expect(await rules.check('anything', { nested: [{ password: 1234 }] })).toMatchObject({ rule: 'global:critical' });
  });

  it('scans an append joined to the end of the file it extends (precedingText)', async () => {
    const args = { file_path: 'outputs/a.env', content: 'word=hunter2\n', append: true };
    expect(await rules.check('write_file', args)).toMatchObject({ rule: 'default' });
    expect(await rules.check('write_file', args, { precedingText: 'HOST=db\npass' })).toMatchObject({
      rule: 'global:critical',
      reason: expect.stringContaining('with the end of the file this call appends to'),
    });
    // Invisible characters at the seam do not hide it either.
    expect(await rules.check('write_file', { ...args, content: '\u200bword=x' }, { precedingText: 'pass' })).toMatchObject({ rule: 'global:critical' });
  });
});

describe('rules file validation', () => {
  it('names the setting that is wrong', () => {
    expect(() => ApprovalRules.parse('global: { default_action: maybe }')).toThrow(/hitl_rules\.yaml is invalid: global\.default_action/);
    expect(() => ApprovalRules.parse('tools: { x: { patterns: { high_risk: ["("] } } }')).toThrow(
      /tools\.x\.patterns\.high_risk\[0\]: invalid regular expression/,
    );
    expect(() => ApprovalRules.parse('global: { risk_patterns: { severe: { patterns: [x] } } }')).toThrow(/global\.risk_patterns/);
    expect(() => ApprovalRules.parse('checkers: { http_fetch: { high_risk_hosts: ["http://x"] } }')).toThrow(/checkers\.http_fetch/);
    expect(() => ApprovalRules.parse('unknown_key: 1')).toThrow(/hitl_rules\.yaml is invalid/);
    expect(() => ApprovalRules.parse('global: [')).toThrow(/is not valid YAML/);
  });

  it('uses RE2: lookaround and backreferences are refused at load, JavaScript spellings like \\u00e9 still load', async () => {
    expect(() => ApprovalRules.parse("global: { risk_patterns: { high: { patterns: ['secret(?=x)'] } } }")).toThrow(
      /global\.risk_patterns\.high\.patterns\[0\]: invalid regular expression .*no lookaround, no backreferences/,
    );
    expect(() => ApprovalRules.parse("global: { risk_patterns: { high: { patterns: ['(a)\\1'] } } }")).toThrow(/invalid regular expression/);
    const js = ApprovalRules.parse("global: { risk_patterns: { high: { patterns: ['caf\\u00e9', '(?<word>zebra)'] } } }");
    expect(await js.check('anything', { q: 'Café' })).toMatchObject({ rule: 'global:high' });
    expect(await js.check('anything', { q: 'a zebra' })).toMatchObject({ rule: 'global:high' });
  });

  it('reports problems as ConfigError (the process does not start)', async () => {
    expect(() => ApprovalRules.parse('global: { enable_approval: "sometimes" }')).toThrow(ConfigError);
    await expect(ApprovalRules.load('/nonexistent/hitl_rules.yaml')).rejects.toThrow(/HITL_RULES: cannot read \/nonexistent\/hitl_rules\.yaml/);
  });
});

describe('the shipped hitl_rules.yaml', () => {
  const shippedRules = ApprovalRules.load(DEFAULT_RULES_PATH);
  const writing = async (content: string) => (await shippedRules).check('write_file', { file_path: 'outputs/notes.txt', content });

  it('loads, catches secrets and risky calls, and allows ordinary ones', async () => {
    const shipped = await shippedRules;
    expect(await shipped.check('write_file', { file_path: 'outputs/cfg.env', content: 'API_KEY=abc123' })).toMatchObject({
      action: 'require_approval',
      rule: 'global:critical',
    });
    expect(await shipped.check('http_fetch', { url: 'http://10.0.0.1/' })).toMatchObject({ risk: 'high', rule: 'checker:http_fetch' });
    expect(await shipped.check('http_fetch', { url: 'https://metadata.google.internal/' })).toMatchObject({ risk: 'high', rule: 'checker:http_fetch' });
    expect(await shipped.check('read_file', { file_path: 'uploads/a.pdf' })).toMatchObject({ action: 'allow', rule: 'default' });
    expect(await shipped.check('http_fetch', { url: 'https://example.com/' })).toMatchObject({ action: 'allow' });
  });

  // Fake credentials of the right shapes (none is real).
  it.each([
    ['passwd=', 'passwd=hunter2'],
    ['pwd:', 'pwd: hunter2'],
    ['pass phrase', 'pass phrase = correct horse'],
    ['passphrase in JSON', '{"passphrase": "correct horse"}'],
    ['PGPASSWORD', 'export PGPASSWORD=s3cr3t'],
    ['db_password in YAML', 'db_password: s3cr3t'],
    ['API KEY with a space', 'API KEY=abc123'],
    ['api-key header', 'x-api-key: abc123'],
    ['OPENAI_API_KEY', 'OPENAI_API_KEY="abc123"'],
    ['AWS_SECRET_ACCESS_KEY', 'AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'],
    ['client_secret', 'client_secret: abc'],
    ['GITHUB_TOKEN', 'GITHUB_TOKEN=abc123'],
    ['access_token in JSON', '{"access_token":"abc.def"}'],
    ['AWS_ACCESS_KEY_ID', 'AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE'],
    ['private_key', 'private_key: |'],
    ['Authorization: Bearer', 'Authorization: Bearer abc.def.ghi-123'],
    ['bearer token alone', 'use bearer Zm9vYmFyYmF6cXV4cXV1eDEyMzQ1Ng'],
    ['URL with a password', 'postgres://app:s3cr3t@db.example.com:5432/app'],
    ['private key block', '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk='],
    ['PGP private key block', '-----BEGIN PGP PRIVATE KEY BLOCK-----'],
    ['AWS access key id alone', 'key AKIAIOSFODNN7EXAMPLE here'],
    ['GitHub classic token', `ghp_${'a1B2'.repeat(9)}`],
    ['GitHub fine-grained token', `github_pat_${'A1b2C3d4E5'.repeat(3)}_x`],
    ['GitLab token', `glpat-${'x1Y2z3'.repeat(4)}`],
    ['Slack token', 'xoxb-123456789012-abcdefABCDEF'],
    ['Slack webhook', 'https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXX'],
    ['OpenAI key', `sk-${'a1B2c3D4e5'.repeat(4)}`],
    ['OpenAI project key', `sk-proj-${'a1B2c3D4e5_-'.repeat(3)}`],
    ['Anthropic key', `sk-ant-api03-${'a1B2c3D4e5'.repeat(3)}`],
    ['Stripe key', `sk_live_${'a1B2c3D4'.repeat(3)}`],
    ['Google API key', `AIza${'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R'.slice(0, 35)}`],
    ['npm token', `npm_${'a1B2c3'.repeat(6)}`],
    ['Hugging Face token', `hf_${'a1B2c3'.repeat(6)}`],
    ['JWT', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'],
  ])('flags %s', async (_name, content) => {
    expect(await writing(content)).toMatchObject({ action: 'require_approval', rule: 'global:critical' });
  });

  it.each([
    'Enter the password field below; the password must be 12 characters.',
    'Forgot your password? Reset it from the login page.',
    'The API key is stored in the vault, never in the repository.',
    'Keep secrets out of git. The secretary: Jane.',
    'max_tokens=4096, tokenizer: cl100k, tokens: 1200',
    'PASSWORD_MIN_LENGTH=12',
    'password=""',
    'password: <your password here>',
    'PWD=/home/agent',
    'the bearer of bad news',
    'scikit: sk-learn-estimator-guide',
    'risk-assessment-for-the-quarterly-plan-2024',
    'https://example.com:8443/path?q=1',
    'git@github.com:org/repo.git',
    'AKIA is a prefix of AWS key ids',
  ])('does not flag ordinary prose: %s', async (content) => {
    expect(await writing(content)).toMatchObject({ action: 'allow', rule: 'default' });
  });
});
