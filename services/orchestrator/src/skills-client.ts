import { Headers, type Bus } from '@agentloop/bus';
import { ListSkillsRequestSchema, ListSkillsResponseSchema, LoadSkillRequestSchema, LoadSkillResponseSchema, create, fromBinary, toBinary } from '@agentloop/proto';

export const SKILLS_CLIENT_SUBJECTS = { list: 'agentloop.skills.list', load: 'agentloop.skills.load' } as const;

/**
 * The orchestrator's side of the skill sandbox for @mentions (seed 001 §2.4): which skill ids a
 * tenant has (briefly cached), and loading a mentioned skill into the workspace before the model
 * is asked to read it. Without a skill sandbox there are simply no skills.
 */
export class SkillsClient {
  private readonly cache = new Map<string, { at: number; names: ReadonlySet<string> }>();

  constructor(
    private readonly bus: Bus,
    private readonly opts: { timeoutMs?: number; cacheMs?: number } = {},
  ) {}

  async names(tenantId: string): Promise<ReadonlySet<string>> {
    const hit = this.cache.get(tenantId);
    if (hit && Date.now() - hit.at < (this.opts.cacheMs ?? 10_000)) return hit.names;
    let names: ReadonlySet<string>;
    try {
      const reply = await this.bus.request(SKILLS_CLIENT_SUBJECTS.list, toBinary(ListSkillsRequestSchema, create(ListSkillsRequestSchema, { tenantId })), {
        timeoutMs: this.opts.timeoutMs ?? 3_000,
        headers: { [Headers.tenant]: tenantId },
      });
      const res = fromBinary(ListSkillsResponseSchema, reply.data);
      names = new Set(res.error ? [] : res.skills.map((s) => s.id));
    } catch {
      names = new Set();
    }
    if (this.cache.size > 1000) this.cache.clear();
    this.cache.set(tenantId, { at: Date.now(), names });
    return names;
  }

  /** Links a skill into a workspace; returns its document path, or throws with the sandbox's reason. */
  async load(tenantId: string, threadId: string, skillId: string): Promise<string> {
    const reply = await this.bus.request(SKILLS_CLIENT_SUBJECTS.load, toBinary(LoadSkillRequestSchema, create(LoadSkillRequestSchema, { tenantId, threadId, skillId })), {
      timeoutMs: this.opts.timeoutMs ?? 10_000,
      headers: { [Headers.tenant]: tenantId },
    });
    const res = fromBinary(LoadSkillResponseSchema, reply.data);
    if (res.error) throw new Error(res.error.message);
    return res.docPath;
  }
}
