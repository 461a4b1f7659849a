import { readFileSync } from 'node:fs';
import { INDEXER_RPC, serveService, subjectsOf, type Bus, type Subscription } from '@agentloop/bus';
import { errorMessage, type Logger } from '@agentloop/core';
import type { IndexerConfig } from './config.js';
import { DocumentService } from './documents.js';
import { readDocument } from './handlers/read.js';
import { searchDocument } from './handlers/search.js';

/** This service's subjects, as declared once in INDEXER_RPC (@agentloop/bus). */
const SUBJECTS = subjectsOf(INDEXER_RPC);
export const INDEXER_SUBJECTS = { read: SUBJECTS.readDocument, search: SUBJECTS.searchDocument } as const;

/** Queue group and NATS micro-service name. */
export const INDEXER_SERVICE = INDEXER_RPC.queue;

/** From package.json; src/ and dist/ are both one level below it. */
export const INDEXER_VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export interface IndexerDeps {
  bus: Bus;
  logger: Logger;
  config: IndexerConfig;
}

export interface Indexer {
  /** Prepares the index folder, sweeps stale indexes, and serves the subjects. */
  start(): Promise<void>;
  /** Stops serving and the stale-index sweeper, then terminates the extraction workers. Idempotent. */
  stop(): Promise<void>;
  readonly documents: DocumentService;
}

export function createIndexer({ bus, logger: baseLogger, config }: IndexerDeps): Indexer {
  const logger = baseLogger.child({ component: 'indexer' });
  let documents = new DocumentService(config, logger);
  let subs: Subscription[] = [];
  let sweeper: NodeJS.Timeout | undefined;
  let stopped = false;

  const sweep = () => {
    documents.sweep().catch((err: unknown) => logger.warn({ err: errorMessage(err) }, 'stale index sweep failed'));
  };

  return {
    get documents() {
      return documents;
    },
    async start() {
      if (subs.length > 0) return;
      if (stopped) {
        documents = new DocumentService(config, logger);
        stopped = false;
      }
      await documents.init();
      try {
        const impl = { readDocument: readDocument(documents), searchDocument: searchDocument(documents) };
        subs.push(await serveService(bus, INDEXER_RPC, impl, { logger, version: INDEXER_VERSION, description: 'AgentLoop document extraction and search' }));
      } catch (err) {
        await this.stop();
        throw err;
      }
      sweep();
      sweeper = setInterval(sweep, config.INDEX_SWEEP_INTERVAL_MS);
      sweeper.unref();
      logger.info({ version: INDEXER_VERSION, workers: config.EXTRACT_WORKERS }, 'indexer serving');
    },
    async stop() {
      if (sweeper) clearInterval(sweeper);
      sweeper = undefined;
      const current = subs;
      subs = [];
      await Promise.all(current.map((s) => s.unsubscribe()));
      if (!stopped) {
        stopped = true;
        await documents.close();
      }
      if (current.length > 0) logger.info('indexer stopped');
    },
  };
}
