/**
 * LangGraph's official checkpointer conformance suite
 * (@langchain/langgraph-checkpoint-validation) against MySQLSaver on a real
 * MariaDB. Each checkpointer the suite creates gets its own empty database.
 */
import * as vitest from 'vitest';
import { createConnection } from 'mysql2/promise';
import { startMariaDb, type DevServer } from '@agentloop/devservers';
import { MySQLSaver } from './saver.js';

// The suite calls describe/it/expect/beforeAll... as globals (jest style).
const { describe, it, expect, beforeAll, afterAll, beforeEach, afterEach } = vitest;
Object.assign(globalThis, { describe, it, expect, beforeAll, afterAll, beforeEach, afterEach });
const { validate, deltaChannelHistoryTests } = await import('@langchain/langgraph-checkpoint-validation');

let server: DevServer | undefined;
let n = 0;
const databases = new WeakMap<MySQLSaver, string>();

async function admin(sqlText: string): Promise<void> {
  const conn = await createConnection(server!.url);
  try {
    await conn.query(sqlText);
  } finally {
    await conn.end();
  }
}

const initializer = {
  checkpointerName: '@agentloop/checkpoint-mysql',
  beforeAllTimeout: 120_000,
  async beforeAll() {
    server ??= await startMariaDb();
  },
  async afterAll() {
    await server?.stop();
    server = undefined;
  },
  async createCheckpointer() {
    server ??= await startMariaDb();
    const name = `validation_${process.pid}_${n++}`;
    await admin(`CREATE DATABASE \`${name}\``);
    const saver = MySQLSaver.fromConnString(server.url.replace(/\/agentloop$/, `/${name}`));
    await saver.setup();
    databases.set(saver, name);
    return saver;
  },
  async destroyCheckpointer(saver: MySQLSaver) {
    await saver.end();
    const name = databases.get(saver);
    if (name) await admin(`DROP DATABASE \`${name}\``);
  },
};

validate(initializer);
describe('delta channel history', () => deltaChannelHistoryTests(initializer));
