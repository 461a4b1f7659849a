/* eslint-disable @typescript-eslint/no-explicit-any -- migrations run against the database as it is at that version, untyped by design (Kysely guidance). */
import type { Kysely, Migration } from 'kysely';
import type { SqlDialectName } from '../schema.js';
import { columnTypes } from './column-types.js';

/**
 * 0019: OAuth authorization code grants of remote MCP servers, per tenant (issue 14).
 *
 * `mcp_oauth_grants`: one row per (tenant, server) with what the MCP SDK's OAuthClientProvider
 * keeps — the tokens, the client registered by dynamic client registration (or the client ID
 * metadata document URL), and the discovered authorization server — as JSON documents, with the
 * access token's expiry and scope copied out for the status listing.
 *
 * `mcp_oauth_flows`: an authorization started and not finished yet, keyed by its `state` (the
 * capability the gateway's callback presents): the tenant and server it is for, the PKCE
 * verifier and the redirect URI. A row is deleted when it is used (one use) and is worthless
 * after 10 minutes (`created_at`, swept through `mcp_oauth_flows_created_idx`).
 */
export function mcpOAuth(dialect: SqlDialectName): Migration {
  const { mysql, id, millis, doc, tableOptions: options } = columnTypes(dialect);
  const indexOnce = async (run: () => Promise<unknown>) => {
    try {
      await run();
    } catch (err) {
      // ER_DUP_KEYNAME: created by an interrupted earlier attempt.
      if ((err as { errno?: number }).errno !== 1061) throw err;
    }
  };
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('mcp_oauth_grants')
        .ifNotExists()
        .addColumn('tenant_id', id, (c) => c.notNull())
        .addColumn('server', id, (c) => c.notNull())
        .addColumn('tokens', doc)
        .addColumn('client_info', doc)
        .addColumn('discovery', doc)
        .addColumn('expires_at', millis)
        .addColumn('scope', doc)
        .addColumn('updated_at', millis, (c) => c.notNull())
        .addPrimaryKeyConstraint('mcp_oauth_grants_pk', ['tenant_id', 'server'])
        .$call(options)
        .execute();
      await db.schema
        .createTable('mcp_oauth_flows')
        .ifNotExists()
        .addColumn('state', id, (c) => c.notNull().primaryKey())
        .addColumn('tenant_id', id, (c) => c.notNull())
        .addColumn('server', id, (c) => c.notNull())
        .addColumn('code_verifier', doc, (c) => c.notNull())
        .addColumn('redirect_uri', doc, (c) => c.notNull())
        .addColumn('created_at', millis, (c) => c.notNull())
        .$call(options)
        .execute();
      await indexOnce(() =>
        db.schema
          .createIndex('mcp_oauth_flows_created_idx')
          .$call((b) => (mysql ? b : b.ifNotExists()))
          .on('mcp_oauth_flows')
          .columns(['created_at'])
          .execute(),
      );
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('mcp_oauth_flows').ifExists().execute();
      await db.schema.dropTable('mcp_oauth_grants').ifExists().execute();
    },
  };
}
