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

/** Paths of the console that carry no data (its page and scripts): served without an API key; the page asks for one. */
export function isConsoleAsset(urlPath: string): boolean {
  return urlPath === '/console' || urlPath === '/console/' || urlPath.startsWith('/console/app/') || urlPath.startsWith('/console/vendor/');
}

/** `GET /console`: the ops console (README "Ops console"), a single page over the public API. */
export function registerConsoleStaticRoutes(app: FastifyInstance): void {
  const assets = loadAssets();
  const page = assets.app.get('index.html');
  if (!page) throw new Error(`The ops console's index.html is missing from ${CONSOLE_DIR}`);
  const send = (asset: Asset | undefined, what: string) => {
    if (!asset) throw notFound(`Not found: ${what}`);
    return asset;
  };
  const serve = (reply: import('fastify').FastifyReply, asset: Asset) =>
    reply
      .header('content-type', asset.type)
      .header('cache-control', 'no-cache')
      .header('x-content-type-options', 'nosniff')
      // The page runs only its own scripts, and talks only to this origin.
      .header('content-security-policy', "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:")
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
