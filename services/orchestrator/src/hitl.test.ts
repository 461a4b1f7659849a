import { describe, expect, it } from 'vitest';
import { hitlRequest, interruptOnlyValues, parseApprovalResume } from './hitl.js';

describe('parseApprovalResume: langchain v1 decisions', () => {
  it('approve', () => {
    expect(parseApprovalResume({ decisions: [{ type: 'approve' }] }, 'write_file')).toEqual({ answer: { decision: 'approved', by: '', comment: '' } });
  });

  it('reject with a message: the message is the comment the model reads', () => {
    expect(parseApprovalResume({ decisions: [{ type: 'reject', message: 'not in prod' }] }, 'write_file')).toEqual({
      answer: { decision: 'rejected', by: '', comment: 'not in prod' },
    });
    expect(parseApprovalResume({ decisions: [{ type: 'reject' }] }, 'write_file')).toEqual({ answer: { decision: 'rejected', by: '', comment: '' } });
  });

  it('edit of the same tool: approved with the edited arguments', () => {
    const args = { file_path: 'outputs/b.txt', content: 'x' };
    expect(parseApprovalResume({ decisions: [{ type: 'edit', edited_action: { name: 'write_file', args } }] }, 'write_file')).toEqual({
      answer: { decision: 'approved', by: '', comment: '', edited_args: args },
    });
    // A bare edit decision (not wrapped in `decisions`) reads the same.
    expect(parseApprovalResume({ type: 'edit', edited_action: { name: 'write_file', args } }, 'write_file')).toMatchObject({ answer: { edited_args: args } });
  });

  it('`by` on the resume or on the decision labels the approver', () => {
    expect(parseApprovalResume({ decisions: [{ type: 'approve' }], by: 'alice' }, 't')).toMatchObject({ answer: { by: 'alice' } });
    expect(parseApprovalResume({ decisions: [{ type: 'approve', by: 'bob' }] }, 't')).toMatchObject({ answer: { by: 'bob' } });
  });

  it('an edit naming another tool is refused, saying why', () => {
    const r = parseApprovalResume({ decisions: [{ type: 'edit', edited_action: { name: 'shell', args: {} } }] }, 'write_file');
    expect(r).toEqual({ error: expect.stringMatching(/^edit refused: "edited_action.name" must be the tool being approved \("write_file"\), got "shell"/) });
  });

  it.each([
    [{ decisions: [{ type: 'edit', edited_action: { name: 'write_file', args: 'x' } }] }, /"edited_action.args" must be a JSON object/],
    [{ decisions: [{ type: 'edit', edited_action: { name: 'write_file', args: [1] } }] }, /"edited_action.args" must be a JSON object/],
    [{ decisions: [{ type: 'edit' }] }, /needs "edited_action"/],
    [{ decisions: [] }, /one decision per action request .* got 0 decisions/],
    [{ decisions: [{ type: 'approve' }, { type: 'approve' }] }, /got 2 decisions/],
    [{ decisions: 'approve' }, /got no list/],
    [{ decisions: ['approve'] }, /a decision must be an object/],
    [{ decisions: [{ type: 'respond', message: 'hi' }] }, /unknown decision type "respond"/],
  ])('%j is refused', (value, why) => {
    const r = parseApprovalResume(value, 'write_file');
    expect('error' in r && r.error).toMatch(why);
  });

  it("AgentLoop's own forms still work; anything else is unrecognized (error undefined)", () => {
    expect(parseApprovalResume({ decision: 'approve', by: 'alice', comment: 'ok' }, 't')).toEqual({
      answer: { decision: 'approved', by: 'alice', comment: 'ok' },
    });
    expect(parseApprovalResume('reject', 't')).toEqual({ answer: { decision: 'rejected', by: '', comment: '' } });
    expect(parseApprovalResume({ type: 'reject', message: 'no' }, 't')).toEqual({ answer: { decision: 'rejected', by: '', comment: 'no' } });
    expect(parseApprovalResume('maybe', 't')).toEqual({ error: undefined });
    expect(parseApprovalResume({ type: 'edit_please' }, 't')).toEqual({ error: undefined });
  });
});

describe('hitlRequest', () => {
  it('one action request and its review config, every decision allowed', () => {
    expect(hitlRequest({ name: 'rm', args: { p: 1 } }, 'risky', 'high')).toEqual({
      action_requests: [{ name: 'rm', args: { p: 1 }, description: 'rm needs approval: risky (risk: high)' }],
      review_configs: [{ action_name: 'rm', allowed_decisions: ['approve', 'edit', 'reject'] }],
    });
  });
});

describe('interruptOnlyValues', () => {
  const approval = { id: 'i1', value: { type: 'tool_approval', tool: 'rm' } };
  const delegation = { id: 'i2', value: { type: 'agentloop_delegation', children: [] } };

  it("LangGraph's interrupt chunk: the human interrupts alone", () => {
    expect(interruptOnlyValues({ __interrupt__: [approval, delegation] })).toEqual({ __interrupt__: [approval] });
  });

  it('only internal (delegation) interrupts: nothing to publish', () => {
    expect(interruptOnlyValues({ __interrupt__: [delegation] })).toBeNull();
    expect(interruptOnlyValues({ __interrupt__: [] })).toBeNull();
  });

  it('state values are not an interrupt chunk', () => {
    expect(interruptOnlyValues({ messages: [] })).toBeUndefined();
    expect(interruptOnlyValues({ messages: [], __interrupt__: [approval] })).toBeUndefined();
    expect(interruptOnlyValues(null)).toBeUndefined();
  });
});
