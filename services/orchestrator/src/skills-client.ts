import { Headers, RemoteError, serviceClient, type Bus } from '@agentloop/bus';
import { SkillSandbox } from '@agentloop/proto';
import { SKILL_CATALOG_SUBJECT, SkillCatalogResponse } from '@agentloop/skills';
import { RunInputError } from './errors.js';

/** Which catalog a run sees: its environment (seed 002) and whether it is a delegated agent. */
export interface CatalogQuery {
  environment?: string;
  subagent?: boolean;
}

/**
 * The orchestrator's side of the skill sandbox: the catalog of a tenant in an environment
 * (briefly cached: every model call reads it), the skill ids for @mentions (seed 001 §2.4), and
 * loading a skill into the workspace before the model is asked to read it. Without a skill sandbox
 * there are simply no skills.
 */
export class SkillsClient {
  private readonly cache = new Map<string, { at: number; catalog: SkillCatalogResponse }>();
  private readonly skills;

  constructor(
    private readonly bus: Bus,
    private readonly opts: { timeoutMs?: number; cacheMs?: number } = {},
  ) {
    this.skills = serviceClient(bus, SkillSandbox);
  }

  /**
   * The tenant's skills in the environment (skills.yaml; an empty catalog when no sandbox answers).
   * An unknown environment is the run's input error, naming the configured ones.
   */
  async catalog(tenantId: string, query: CatalogQuery = {}): Promise<SkillCatalogResponse> {
    const key = JSON.stringify([tenantId, query.environment ?? null, query.subagent ?? false]);
    const hit = this.cache.get(key);
    if (hit && Date.now() - hit.at < (this.opts.cacheMs ?? 10_000)) return hit.catalog;
    const body = JSON.stringify({ ...(query.environment ? { environment: query.environment } : {}), subagent: query.subagent ?? false });
    let catalog: SkillCatalogResponse;
    try {
      const reply = await this.bus.request(SKILL_CATALOG_SUBJECT, new TextEncoder().encode(body), {
        timeoutMs: this.opts.timeoutMs ?? 10_000,
        headers: { [Headers.tenant]: tenantId },
        idempotent: true,
      });
      catalog = SkillCatalogResponse.parse(JSON.parse(new TextDecoder().decode(reply.data)));
    } catch (err) {
      // The sandbox refuses an unknown environment (naming the configured ones): the run's input is wrong.
      if (err instanceof RemoteError && err.remoteCode === 'INVALID_ARGUMENT') {
        throw new RunInputError(`Invalid config.configurable.environment: ${err.message}`, { cause: err });
      }
      // No sandbox (or an older one without this subject): no skills, as before.
      catalog = { environment: null, settings: null, skills: [] };
    }
    if (this.cache.size > 1000) this.cache.clear();
    this.cache.set(key, { at: Date.now(), catalog });
    return catalog;
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
