import { serviceClient, type Bus } from '@agentloop/bus';
import { SkillSandbox } from '@agentloop/proto';

/**
 * The orchestrator's side of the skill sandbox for @mentions (seed 001 §2.4): which skill ids a
 * tenant has (briefly cached), and loading a mentioned skill into the workspace before the model
 * is asked to read it. Without a skill sandbox there are simply no skills.
 */
export class SkillsClient {
  private readonly cache = new Map<string, { at: number; names: ReadonlySet<string> }>();
  private readonly skills;

  constructor(
    bus: Bus,
    private readonly opts: { timeoutMs?: number; cacheMs?: number } = {},
  ) {
    this.skills = serviceClient(bus, SkillSandbox);
  }

  async names(tenantId: string): Promise<ReadonlySet<string>> {
    const hit = this.cache.get(tenantId);
    if (hit && Date.now() - hit.at < (this.opts.cacheMs ?? 10_000)) return hit.names;
    let names: ReadonlySet<string>;
    try {
      const res = await this.skills.listSkills({ tenantId }, { timeoutMs: this.opts.timeoutMs, tenantId });
      names = new Set(res.error ? [] : res.skills.map((s) => s.id));
    } catch {
      names = new Set();
    }
    if (this.cache.size > 1000) this.cache.clear();
    this.cache.set(tenantId, { at: Date.now(), names });
    return names;
  }

  /** Drops the cached skill ids (a cluster reload: skills were added or removed); returns how many tenants' were dropped. */
  forgetListings(): number {
    const n = this.cache.size;
    this.cache.clear();
    return n;
  }

  /** Links a skill into a workspace; returns its document path, or throws with the sandbox's reason. */
  async load(tenantId: string, threadId: string, skillId: string): Promise<string> {
    const res = await this.skills.loadSkill({ tenantId, threadId, skillId }, { timeoutMs: this.opts.timeoutMs, tenantId });
    if (res.error) throw new Error(res.error.message);
    return res.docPath;
  }
}
