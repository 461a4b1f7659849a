/**
 * An MCP server's request for the user's input (`{type: "mcp_elicitation", server, message, mode,
 * requested_schema, url}`, docs/mcp-client-features.md "Elicitation") in a chat: asked as a question,
 * and the person's reply turned into the resume value `{action, content?}`. The orchestrator
 * validates the content against the schema and asks again when it does not fit, so this only
 * shapes the reply: one field takes the reply as its value, several take JSON or `name=value` pairs.
 */

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

export interface ElicitationField {
  name: string;
  type: string;
  description?: string;
  required: boolean;
  default?: unknown;
  enum?: unknown[];
}

export interface ElicitationPrompt {
  server: string;
  message: string;
  mode: 'form' | 'url';
  url?: string;
  fields: ElicitationField[];
  /** The orchestrator's complaint about the previous answer, when it asks again. */
  error?: string;
}

export type ElicitationResume = { action: 'accept'; content?: Obj } | { action: 'decline' } | { action: 'cancel' };

/** The elicitation an interrupt value asks for, or undefined for another kind of interrupt. */
export function elicitationPromptOf(value: unknown): ElicitationPrompt | undefined {
  if (!isObj(value) || value.type !== 'mcp_elicitation') return undefined;
  const schema = isObj(value.requested_schema) ? value.requested_schema : {};
  const props = isObj(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
  const fields = Object.entries(props).map(([name, p]): ElicitationField => {
    const prop = isObj(p) ? p : {};
    return {
      name,
      type: typeof prop.type === 'string' ? prop.type : 'string',
      ...(typeof prop.description === 'string' ? { description: prop.description } : typeof prop.title === 'string' ? { description: prop.title } : {}),
      required: required.has(name),
      ...('default' in prop ? { default: prop.default } : {}),
      ...(Array.isArray(prop.enum) ? { enum: prop.enum } : {}),
    };
  });
  return {
    server: typeof value.server === 'string' ? value.server : 'an MCP server',
    message: typeof value.message === 'string' ? value.message : '',
    mode: value.mode === 'url' ? 'url' : 'form',
    ...(typeof value.url === 'string' && value.url ? { url: value.url } : {}),
    fields,
    ...(typeof value.error === 'string' && value.error ? { error: value.error } : {}),
  };
}

/** The question shown to the person. */
export function elicitationQuestion(p: ElicitationPrompt): string {
  const lines = [`${p.server} asks: ${p.message}`];
  if (p.error) lines.push(`(The previous answer did not fit: ${p.error})`);
  if (p.mode === 'url') {
    lines.push(`Open ${p.url ?? '(no URL given)'} — then reply "accept" when done, or "decline" / "cancel".`);
    return lines.join('\n');
  }
  for (const f of p.fields) {
    const extras = [f.type, f.required ? 'required' : 'optional', ...(f.enum ? [`one of ${f.enum.map(String).join(', ')}`] : [])];
    if (f.default !== undefined) extras.push(`default ${JSON.stringify(f.default)}`);
    lines.push(`- ${f.name} (${extras.join(', ')})${f.description ? `: ${f.description}` : ''}`);
  }
  lines.push(
    p.fields.length === 1
      ? 'Reply with the value, or "decline" / "cancel".'
      : 'Reply with name=value pairs separated by commas (or a JSON object), or "decline" / "cancel".',
  );
  return lines.join('\n');
}

function coerce(field: ElicitationField | undefined, raw: string): unknown {
  const text = raw.trim();
  switch (field?.type) {
    case 'number':
    case 'integer': {
      const n = Number(text);
      return text !== '' && Number.isFinite(n) ? n : text;
    }
    case 'boolean':
      if (/^(true|yes|y|1)$/i.test(text)) return true;
      if (/^(false|no|n|0)$/i.test(text)) return false;
      return text;
    default:
      return text;
  }
}

/** The person's reply as the interrupt's resume value. */
export function elicitationResume(p: ElicitationPrompt, reply: string): ElicitationResume {
  const text = reply.trim();
  const word = text.toLowerCase();
  if (word === 'decline' || word === 'no') return { action: 'decline' };
  if (word === 'cancel') return { action: 'cancel' };
  if (p.mode === 'url') return { action: 'accept' };
  if (text.startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (isObj(parsed)) return { action: 'accept', content: parsed };
    } catch {
      // not JSON: read as a value or pairs below
    }
  }
  if (p.fields.length === 1) return { action: 'accept', content: { [p.fields[0]!.name]: coerce(p.fields[0], text) } };
  const content: Obj = {};
  for (const pair of text.split(/[,\n]/)) {
    const eq = pair.indexOf('=');
    if (eq <= 0) continue;
    const name = pair.slice(0, eq).trim();
    content[name] = coerce(
      p.fields.find((f) => f.name === name),
      pair.slice(eq + 1),
    );
  }
  return { action: 'accept', content };
}
