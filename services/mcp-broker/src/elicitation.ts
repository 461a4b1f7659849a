/**
 * MCP elicitation as a run interrupt (docs/mcp-client-features.md "Elicitation"). A server's
 * `elicitation/create` during a call is answered from the call's `CallElicitation`:
 * - with the user's answer, when the call is the retry of one that needed input (the answer was
 *   passed in ExecuteToolRequest.elicitation_answer_json): schema defaults filled in, content
 *   checked against the requested schema;
 * - else, for a tool that may run again (idempotent or read-only): `cancel`, and the call's result
 *   becomes "needs input" (ExecuteToolResponse.elicitation), on which the run interrupts;
 * - else `decline`, and the tool's result tells the model to ask the user itself.
 */
import { Ajv, type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import { z } from 'zod';
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';

export type ElicitParams = ElicitRequest['params'];

/** The user's answer to an elicitation (ExecuteToolRequest.elicitation_answer_json). */
export const ElicitationAnswer = z
  .object({
    action: z.enum(['accept', 'decline', 'cancel']),
    content: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.array(z.string())])).optional(),
  })
  .strict();
export type ElicitationAnswer = z.infer<typeof ElicitationAnswer>;

/** What a server asked the user, as the run's interrupt shows it (proto ToolElicitation). */
export interface ElicitationRequest {
  server: string;
  message: string;
  mode: 'form' | 'url';
  /** JSON Schema of the form (mode form). */
  requestedSchemaJson: string;
  /** The page the user opens (mode url). */
  url: string;
}

/** Parses elicitation_answer_json; throws a message naming what is wrong. */
export function parseElicitationAnswer(json: string): ElicitationAnswer {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (err) {
    throw new Error(`elicitation_answer_json is not valid JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  const parsed = ElicitationAnswer.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`elicitation_answer_json.${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  return parsed.data;
}

// Servers' schemas carry annotations of their own (server-everything's `enumNames`): not strict.
const ajv = new Ajv({ useDefaults: true, strict: false, allErrors: true });
addFormats.default(ajv);

const describeError = (e: ErrorObject) => `${e.instancePath || '(content)'} ${e.message ?? 'is invalid'}`;

/**
 * The content of an accepted form answer: the schema's `default`s filled in for the properties the
 * answer leaves out (SEP-1034), then checked against the schema. Throws a message naming every mismatch.
 */
export function acceptedContent(requestedSchema: unknown, content: Record<string, unknown>): Record<string, unknown> {
  const filled = structuredClone(content);
  let validate;
  try {
    validate = ajv.compile(requestedSchema as object);
  } catch (err) {
    throw new Error(`the server's requested schema cannot be checked (${err instanceof Error ? err.message : String(err)})`);
  }
  if (!validate(filled)) throw new Error(`the answer does not match the requested schema: ${(validate.errors ?? []).map(describeError).join('; ')}`);
  return filled;
}

/**
 * One call's elicitation state: how it answers the server (`respond`) and what the call's result
 * must say afterwards (`needed`, `declined`, `refused`). One elicitation per call is answered; a
 * second one in the same call is declined (its answer could not be told apart on the retry).
 */
export class CallElicitation {
  /** Set when the call needs the user's input: the run interrupts with it. */
  needed: ElicitationRequest | undefined;
  /** Set when the request was declined because the tool may not run again. */
  declined: ElicitationRequest | undefined;
  /** Set when the user's answer did not fit the request: why. */
  refused: string | undefined;
  private asked = 0;

  constructor(
    private readonly policy: {
      /** The user's answer, on the retry of a call that needed input. */
      answer?: ElicitationAnswer;
      /** The tool may run again (idempotent or read-only): a call without an answer becomes "needs input". */
      retryable: boolean;
    },
  ) {}

  respond(server: string, params: ElicitParams): ElicitResult {
    const request = requestOf(server, params);
    this.asked++;
    if (this.asked > 1) return { action: 'decline' };
    const { answer } = this.policy;
    if (answer) {
      if (answer.action !== 'accept') return { action: answer.action };
      if (request.mode === 'url') return { action: 'accept' };
      try {
        const schema = 'requestedSchema' in params ? params.requestedSchema : { type: 'object' };
        return { action: 'accept', content: acceptedContent(schema, answer.content ?? {}) as ElicitResult['content'] };
      } catch (err) {
        this.refused = `MCP server ${server} asked: "${request.message}", and ${err instanceof Error ? err.message : String(err)}`;
        // The server is told the dialog was dismissed; the model gets the mismatch (see `refused`).
        return { action: 'cancel' };
      }
    }
    if (this.policy.retryable) {
      this.needed = request;
      return { action: 'cancel' };
    }
    this.declined = request;
    return { action: 'decline' };
  }

  /** The note added to the result of a call whose elicitation was declined. */
  declinedNote(tool: string): string | undefined {
    const d = this.declined;
    if (!d) return undefined;
    const what = d.mode === 'url' ? `to open ${d.url}` : `for input (${fieldsOf(d.requestedSchemaJson)})`;
    return (
      `[MCP server ${d.server} asked the user ${what}: "${d.message}". AgentLoop declined, because ${tool} is not ` +
      `marked idempotent and cannot be run again once the user answers. Ask the user for this yourself ` +
      `(ask_human), then call the tool again with what they said if its arguments can carry it.]`
    );
  }
}

/** An auto-answer for harnesses: accept with the schema's defaults (the conformance client). */
export function acceptDefaults(_server: string, params: ElicitParams): ElicitResult {
  if (params.mode === 'url') return { action: 'accept' };
  return { action: 'accept', content: acceptedContent('requestedSchema' in params ? params.requestedSchema : {}, {}) as ElicitResult['content'] };
}

function requestOf(server: string, params: ElicitParams): ElicitationRequest {
  if (params.mode === 'url') return { server, message: params.message, mode: 'url', requestedSchemaJson: '', url: params.url };
  return { server, message: params.message, mode: 'form', requestedSchemaJson: JSON.stringify(params.requestedSchema), url: '' };
}

function fieldsOf(schemaJson: string): string {
  try {
    const props = (JSON.parse(schemaJson) as { properties?: Record<string, unknown> }).properties ?? {};
    const names = Object.keys(props);
    return names.length ? `fields: ${names.join(', ')}` : 'no fields';
  } catch {
    return 'a form';
  }
}
