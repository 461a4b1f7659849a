import { describe, expect, it } from 'vitest';
import type { UploadRecord } from '@agentloop/store';
import { SkillsConfig } from './skills-config.js';
import { appendToLastUserMessage, formatUploadReferences, hasUserMessage, isCompactRequest } from './uploads.js';

const skills = SkillsConfig.parse(`
optional:
  pdf: { enabled: false, auto_load_on_file_types: ["pdf"] }
  docs: { auto_load_on_file_types: [".DOCX", "pdf"] }
`);

const upload = (name: string, extra: Partial<UploadRecord> = {}): UploadRecord => ({
  tenantId: 't',
  threadId: 'th',
  uploadId: name,
  path: `uploads/${name}`,
  name,
  originalName: name,
  type: 'pdf',
  mime: 'application/pdf',
  size: 10,
  mismatch: null,
  createdAt: new Date(0),
  runId: 'r',
  ...extra,
});

describe('formatUploadReferences', () => {
  it('lists each file once (latest upload of a name wins) with every skill that handles its extension', () => {
    const text = formatUploadReferences([upload('a.pdf'), upload('b.docx', { type: 'document', size: 5 }), upload('a.pdf', { size: 99 })], skills, 'en');
    expect(text).toBe('Uploaded files:\n- b.docx → uploads/b.docx (document, 5 bytes) [use @docs]\n- a.pdf → uploads/a.pdf (pdf, 99 bytes) [use @pdf, @docs]');
  });

  it('gives no hints when skills or upload auto-loading are off', () => {
    const off = SkillsConfig.parse('global: { auto_load_on_file_upload: false }\noptional:\n  pdf: { auto_load_on_file_types: ["pdf"] }');
    expect(formatUploadReferences([upload('a.pdf')], off, 'en')).toBe('Uploaded files:\n- a.pdf → uploads/a.pdf (pdf, 10 bytes)');
  });
});

describe('appendToLastUserMessage', () => {
  it('appends to the last user message in role, type and LangChain-serialized forms', () => {
    const input = {
      messages: [
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'ok' },
        { type: 'human', content: 'second' },
      ],
    };
    expect(appendToLastUserMessage(input, 'B')).toEqual({ messages: [input.messages[0], input.messages[1], { type: 'human', content: 'second\n\nB' }] });
    const lc = { messages: [{ lc: 1, type: 'constructor', id: ['langchain_core', 'messages', 'HumanMessage'], kwargs: { content: 'hi' } }] };
    expect(appendToLastUserMessage(lc, 'B')).toEqual({ messages: [{ ...lc.messages[0], kwargs: { content: 'hi\n\nB' } }] });
  });

  it('adds a text part to multimodal content and leaves inputs without a user message alone', () => {
    const parts = { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:' } }] }] };
    expect(appendToLastUserMessage(parts, 'B')).toEqual({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: 'data:' } },
            { type: 'text', text: 'B' },
          ],
        },
      ],
    });
    const none = { messages: [{ role: 'assistant', content: 'x' }] };
    expect(hasUserMessage(none)).toBe(false);
    expect(appendToLastUserMessage(none, 'B')).toBe(none);
    expect(hasUserMessage(null)).toBe(false);
  });
});

describe('SkillsConfig', () => {
  it('rejects unknown keys and bad skill ids with the path of the problem', () => {
    expect(() => SkillsConfig.parse('optional:\n  pdf: { auto_load: ["pdf"] }')).toThrow(/optional\.pdf/);
    expect(() => SkillsConfig.parse('optional:\n  "Bad Id": {}')).toThrow(/optional\.Bad Id: Invalid key/);
    expect(() => SkillsConfig.parse('optional: [')).toThrow(/not valid YAML/);
  });

  it('the shipped skills.yaml loads and maps pdf, docx, xlsx/xls and pptx', async () => {
    const shipped = await SkillsConfig.load(undefined);
    expect(['pdf', 'docx', 'xlsx', 'xls', 'pptx', 'txt'].map((e) => shipped.skillsForExtension(e))).toEqual([
      ['pdf'],
      ['docx'],
      ['xlsx'],
      ['xlsx'],
      ['pptx'],
      [],
    ]);
  });
});

describe('isCompactRequest', () => {
  it('is true when the last user message is exactly /compact, in any message form', () => {
    expect(isCompactRequest({ messages: [{ role: 'user', content: ' /compact ' }] })).toBe(true);
    expect(isCompactRequest({ messages: [{ type: 'human', content: [{ type: 'text', text: '/compact' }] }] })).toBe(true);
    expect(
      isCompactRequest({
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'user', content: '/compact' },
        ],
      }),
    ).toBe(true);
  });

  it('is false for other text, a /compact that is not the last user message, or no input', () => {
    expect(isCompactRequest({ messages: [{ role: 'user', content: '/compact now please' }] })).toBe(false);
    expect(
      isCompactRequest({
        messages: [
          { role: 'user', content: '/compact' },
          { role: 'user', content: 'and then?' },
        ],
      }),
    ).toBe(false);
    expect(isCompactRequest(null)).toBe(false);
  });
});
