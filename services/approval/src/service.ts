import { readFileSync } from 'node:fs';
import { APPROVAL_RPC, replicaInstance, serveClusterReload, serveService, subjectsOf, type Bus, type Subscription } from '@agentloop/bus';
import { type Logger } from '@agentloop/core';
import type { Store } from '@agentloop/store';
import { DEFAULT_RULES_PATH, type ApprovalConfig } from './config.js';
import { ApprovalRules, type Checker } from './rules.js';
import { listAudit } from './handlers/audit.js';
import { check } from './handlers/check.js';
import type { HandlerContext } from './handlers/common.js';
import { record } from './handlers/record.js';
import { verifyAudit } from './handlers/verify.js';

/** This service's subjects, as declared once in APPROVAL_RPC (@agentloop/bus). */
const SUBJECTS = subjectsOf(APPROVAL_RPC);
export const APPROVAL_SUBJECTS = { check: SUBJECTS.check, record: SUBJECTS.record, audit: SUBJECTS.listAudit, verify: SUBJECTS.verifyAudit } as const;

/** Queue group and NATS micro-service name. */
export const APPROVAL_SERVICE = APPROVAL_RPC.queue;

/** From package.json; src/ and dist/ are both one level below it. */
export const APPROVAL_VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export interface ApprovalDeps {
  bus: Bus;
  store: Store;
  logger: Logger;
  config: ApprovalConfig;
  /** Rules to use instead of loading HITL_RULES (tests, embedding). */
  rules?: ApprovalRules;
  /** Layer-1 checkers added to (or replacing) the built-in ones, by tool name. */
  checkers?: Record<string, Checker>;
}

export interface ApprovalService {
  /** Serves the four subjects. Idempotent. */
  start(): Promise<void>;
  /** Stops serving. Idempotent; the store and bus belong to the caller. */
  stop(): Promise<void>;
  /** The rules in force. */
  readonly rules: ApprovalRules;
  /**
   * Reads HITL_RULES again (SIGHUP in main.ts); the next check uses the new
   * rules. An invalid file throws a ConfigError and the current rules stay.
   */
  reloadRules(): Promise<ApprovalRules>;
}

/**
 * The approval service (seed 001 Part 7): verdicts from the four-layer rules,
 * and each tenant's hash-chained audit trail of decisions in the shared store.
 * Loads the rules file first: an invalid one rejects with a ConfigError.
 */
export async function createApprovalService(deps: ApprovalDeps): Promise<ApprovalService> {
  const logger = deps.logger.child({ component: 'approval' });
  const rulesPath = deps.config.HITL_RULES ?? DEFAULT_RULES_PATH;
  let rules = deps.rules ?? (await ApprovalRules.load(rulesPath, deps.checkers));
  let subs: Subscription[] = [];

  const ctx: HandlerContext = { rules: () => rules, store: deps.store, logger, enabled: deps.config.APPROVAL_ENABLED };

  const service: ApprovalService = {
    get rules() {
      return rules;
    },
    async reloadRules() {
      const next = await ApprovalRules.load(rulesPath, deps.checkers);
      rules = next;
      logger.info({ path: rulesPath, enabled: next.enabled }, 'approval rules reloaded');
      return next;
    },
    async start() {
      if (subs.length > 0) return;
      const impl = { check: check(ctx), record: record(ctx), listAudit: listAudit(ctx), verifyAudit: verifyAudit(ctx) };
      subs.push(
        await serveService(deps.bus, APPROVAL_RPC, impl, { logger, version: APPROVAL_VERSION, description: 'AgentLoop tool approval rules and audit trail' }),
      );
      // POST /admin/reload: every replica reads its rules file again (libs/bus cluster-reload.ts).
      // Rules given by the caller (tests, embedding) have no file to re-read.
      if (!deps.rules) {
        const instance = replicaInstance();
        const reload = async () => ({ hitl_rules: rulesPath, enabled: (await service.reloadRules()).enabled });
        subs.push(await serveClusterReload(deps.bus, { service: APPROVAL_SERVICE, instance, logger, reload }));
      }
      logger.info(
        {
          version: APPROVAL_VERSION,
          enabled: deps.config.APPROVAL_ENABLED && rules.enabled,
          rules: deps.rules ? '(given)' : rulesPath,
          checkers: rules.checkedTools,
        },
        'approval serving',
      );
    },
    async stop() {
      const current = subs;
      subs = [];
      await Promise.allSettled(current.map((s) => s.unsubscribe()));
      if (current.length > 0) logger.info('approval stopped');
    },
  };
  return service;
}
