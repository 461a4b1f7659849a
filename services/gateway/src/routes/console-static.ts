import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { notFound } from '../errors.js';

/** The console's own files: `services/gateway/console/` (two levels up from src/routes and from dist/routes alike). */
const CONSOLE_DIR = fileURLToPath(new URL('../../console/', import.meta.url));

const require = createRequire(import.meta.url);
/** A file next to a package's main entry (its `dist/`), found without reading the package's exports map. */
const besideEntry = (entry: string, file: string, from: NodeJS.Require = require) => path.join(path.dirname(from.resolve(entry)), file);

/**
 * The ESM builds the console imports, by the name its import map gives them: a fixed allow-list,
 * so no part of a request ever becomes a file path. Preact + htm + signals, ~15 KB minified.
 */
function vendorFiles(): Map<string, string> {
  const signals = require.resolve('@preact/signals');
  return new Map([
    ['preact.js', besideEntry('preact', 'preact.module.js')],
    ['preact-hooks.js', besideEntry('preact/hooks', 'hooks.module.js')],
    ['htm.js', besideEntry('htm', 'htm.module.js')],
    ['signals.js', besideEntry('@preact/signals', 'signals.module.js')],
    ['signals-core.js', besideEntry('@preact/signals-core', 'signals-core.module.js', createRequire(signals))],
  ]);
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
};

interface Asset {
  body: Buffer;
  type: string;
}

/** Reads every file once at boot: the console is a few small files, served from memory. */
function loadAssets(): { app: Map<string, Asset>; vendor: Map<string, Asset> } {
  const app = new Map<string, Asset>();
  for (const name of readdirSync(CONSOLE_DIR)) {
    const type = TYPES[path.extname(name)];
    if (type && /^[a-z0-9-]+\.[a-z]+$/.test(name)) app.set(name, { body: readFileSync(path.join(CONSOLE_DIR, name)), type });
  }
  const vendor = new Map<string, Asset>();
  for (const [name, file] of vendorFiles()) vendor.set(name, { body: readFileSync(file), type: TYPES['.js']! });
  return { app, vendor };
}

/**
 * The page runs only this origin's scripts and its one inline script, the import map (allowed by its
 * hash: no 'unsafe-inline'), and talks only to this origin.
 */
function contentSecurityPolicy(page: string): string {
  const importMap = /<script type="importmap">([\s\S]*?)<\/script>/.exec(page)?.[1];
  if (importMap === undefined) throw new Error("The ops console's index.html has no import map");
  const hash = createHash('sha256').update(importMap, 'utf8').digest('base64');
  return `default-src 'self'; script-src 'self' 'sha256-${hash}'; style-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;
}

/** Paths of the console that carry no data (its page and scripts): served without an API key; the page asks for one. */
export function isConsoleAsset(urlPath: string): boolean {
  return urlPath === '/console' || urlPath === '/console/' || urlPath.startsWith('/console/app/') || urlPath.startsWith('/console/vendor/');
}

/** `GET /console`: the ops console (README "Ops console"), a single page over the public API. */
export function registerConsoleStaticRoutes(app: FastifyInstance): void {
  const assets = loadAssets();
  const page = assets.app.get('index.html');
  if (!page) throw new Error(`The ops console's index.html is missing from ${CONSOLE_DIR}`);
  const csp = contentSecurityPolicy(page.body.toString('utf8'));
  const send = (asset: Asset | undefined, what: string) => {
    if (!asset) throw notFound(`Not found: ${what}`);
    return asset;
  };
  const serve = (reply: import('fastify').FastifyReply, asset: Asset) =>
    reply
      .header('content-type', asset.type)
      .header('cache-control', 'no-cache')
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', csp)
      .send(asset.body);
  app.get('/console', async (_request, reply) => serve(reply, page));
  app.get('/console/', async (_request, reply) => serve(reply, page));
  app.get('/console/app/:file', async (request, reply) => {
    const { file } = request.params as { file: string };
    return serve(reply, send(file === 'index.html' ? undefined : assets.app.get(file), `/console/app/${file}`));
  });
  app.get('/console/vendor/:file', async (request, reply) => {
    const { file } = request.params as { file: string };
    return serve(reply, send(assets.vendor.get(file), `/console/vendor/${file}`));
  });
}
