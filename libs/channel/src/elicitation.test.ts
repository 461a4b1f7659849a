import { describe, expect, it } from 'vitest';
import { elicitationPromptOf, elicitationQuestion, elicitationResume } from './elicitation.js';

const form = {
  type: 'mcp_elicitation',
  tool_call_id: 'c1',
  tool: 'everything_trigger-elicitation-request',
  server: 'everything',
  message: 'Please provide your information',
  mode: 'form',
  requested_schema: {
    type: 'object',
    properties: { name: { type: 'string', description: 'Your name' }, age: { type: 'integer', default: 42 }, vip: { type: 'boolean' } },
    required: ['name'],
  },
};

describe('MCP elicitation in a chat', () => {
  it('reads the interrupt and asks for each field with its type, whether required, and its default', () => {
    const p = elicitationPromptOf(form)!;
    expect(p.fields.map((f) => [f.name, f.type, f.required, f.default])).toEqual([
      ['name', 'string', true, undefined],
      ['age', 'integer', false, 42],
      ['vip', 'boolean', false, undefined],
    ]);
    const q = elicitationQuestion(p);
    expect(q).toContain('everything asks: Please provide your information');
    expect(q).toContain('- name (string, required): Your name');
    expect(q).toContain('- age (integer, optional, default 42)');
    expect(elicitationPromptOf({ type: 'user_input_request', question: 'x' })).toBeUndefined();
  });

  it('turns pairs, JSON and words into the resume value, with the fields typed', () => {
    const p = elicitationPromptOf(form)!;
    expect(elicitationResume(p, 'name=Ada Lovelace, age=36, vip=yes')).toEqual({ action: 'accept', content: { name: 'Ada Lovelace', age: 36, vip: true } });
    expect(elicitationResume(p, '{"name": "Ada"}')).toEqual({ action: 'accept', content: { name: 'Ada' } });
    expect(elicitationResume(p, 'Decline')).toEqual({ action: 'decline' });
    expect(elicitationResume(p, ' cancel ')).toEqual({ action: 'cancel' });
    // A value that does not fit its type is passed as written: the orchestrator checks it and asks again.
    expect(elicitationResume(p, 'name=Ada, age=old')).toEqual({ action: 'accept', content: { name: 'Ada', age: 'old' } });
  });

  it('takes a single field from the reply as is, and a URL request by "accept"', () => {
    const one = elicitationPromptOf({ ...form, requested_schema: { type: 'object', properties: { count: { type: 'number' } } } })!;
    expect(elicitationResume(one, '7.5')).toEqual({ action: 'accept', content: { count: 7.5 } });
    const url = elicitationPromptOf({ type: 'mcp_elicitation', server: 's', message: 'Sign in', mode: 'url', url: 'https://auth.example/x' })!;
    expect(elicitationQuestion(url)).toContain('Open https://auth.example/x');
    expect(elicitationResume(url, 'done')).toEqual({ action: 'accept' });
    expect(elicitationPromptOf({ ...form, error: 'age: must be integer' })!.error).toBe('age: must be integer');
    expect(elicitationQuestion(elicitationPromptOf({ ...form, error: 'age: must be integer' })!)).toContain('did not fit: age: must be integer');
  });
});
