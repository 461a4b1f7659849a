import { watch, type FSWatcher } from 'node:fs';
import { access } from 'node:fs/promises';
import path from 'node:path';
import { errorMessage, type Logger } from '@agentloop/core';
import { ModuleLoader } from './discovery.js';
import type { SkippedTool, ToolRegistry } from './registry.js';
import { DEFAULT_TOOLS_CONFIG_PATH, EMPTY_TOOLS_CONFIG, loadToolsConfig, type ToolsConfig } from './tools-config.js';

export interface ToolLoaderOptions {
  registry: ToolRegistry;
  logger: Logger;
  /** TOOLS_CONFIG; unset: the tools.yaml shipped with the package, or none when it is absent. */
  configPath?: string;
  /** TOOLS_DIRS. */
  dirs: readonly string[];
  importTimeoutMs?: number;
  /** Load .ts tool modules (default: when running from source). */
  typescript?: boolean;
}

/** Outcome of a load or reload. */
export interface ReloadResult {
  /** Tools registered from tool modules (enabled or not). */
  loaded: string[];
  /** Modules or exports not loaded, with the reason. */
  skipped: SkippedTool[];
  /** tools.yaml was invalid: the previous configuration stays in force. */
  configError?: string;
  /** Registered (enabled) tools afterwards. */
  registered: string[];
  /** Names in tools.yaml that match no discovered tool. */
  unknownConfigured: string[];
}

/**
 * Loads tools.yaml and the tool modules into the registry, at boot and on
 * every reload. A reload swaps modules and configuration in one step; reloads
 * never overlap (a request during one is folded into a single follow-up).
 */
export class ToolLoader {
  private readonly modules: ModuleLoader;
  private readonly log: Logger;
  private running: Promise<ReloadResult> | undefined;
  private queued: Promise<ReloadResult> | undefined;

  constructor(private readonly opts: ToolLoaderOptions) {
    this.log = opts.logger.child({ component: 'tool-loader' });
    this.modules = new ModuleLoader({
      logger: this.log,
      ...(opts.importTimeoutMs !== undefined ? { importTimeoutMs: opts.importTimeoutMs } : {}),
      ...(opts.typescript !== undefined ? { typescript: opts.typescript } : {}),
    });
  }

  /** The tools.yaml in use ("" when none). */
  get configPath(): string {
    return this.opts.configPath ?? DEFAULT_TOOLS_CONFIG_PATH;
  }

  /** First load: an invalid tools.yaml throws (ToolsConfigError) so the process does not start. */
  boot(): Promise<ReloadResult> {
    return this.schedule(() => this.run('boot', true));
  }

  /** Re-reads tools.yaml and re-imports the tool modules; an invalid tools.yaml keeps the previous one. */
  reload(reason: string): Promise<ReloadResult> {
    if (this.queued) return this.queued;
    return this.schedule(() => this.run(reason, false));
  }

  private schedule(job: () => Promise<ReloadResult>): Promise<ReloadResult> {
    const start = () => {
      const p = job().finally(() => {
        if (this.running === p) this.running = undefined;
      });
      this.running = p;
      return p;
    };
    if (!this.running) return start();
    const q = this.running
      .then(
        () => undefined,
        () => undefined,
      )
      .then(() => {
        this.queued = undefined;
        return start();
      });
    this.queued = q;
    return q;
  }

  private async run(reason: string, boot: boolean): Promise<ReloadResult> {
    let config: ToolsConfig = this.opts.registry.toolsConfig;
    let configError: string | undefined;
    try {
      config = await this.readConfig();
    } catch (err) {
      if (boot) throw err;
      configError = errorMessage(err);
      this.log.error({ config: this.configPath, reason }, `tools config not reloaded, keeping the previous one: ${configError}`);
    }
    const found = await this.modules.discover(this.opts.dirs);
    const { loaded, skipped } = this.opts.registry.replaceModules(found.tools, config);
    for (const s of skipped) this.log.warn({ source: s.source, reason: s.reason }, 'tool skipped');
    const unknownConfigured = [...config.tools.keys()].filter((n) => !this.opts.registry.lookup(n));
    for (const name of unknownConfigured) this.log.warn({ tool: name }, 'tool configured in tools.yaml but not found');
    const result: ReloadResult = {
      loaded,
      skipped: [...found.skipped, ...skipped],
      ...(configError !== undefined ? { configError } : {}),
      registered: this.opts.registry.names(),
      unknownConfigured,
    };
    this.log.info(
      { reason, loaded: loaded.length, skipped: result.skipped.length, files: found.files, registered: result.registered, config: config.source || null },
      boot ? 'tools loaded' : 'tools reloaded',
    );
    return result;
  }

  private readConfig(): Promise<ToolsConfig> {
    return readToolsConfig(this.opts.configPath);
  }

  /**
   * Reloads after changes in the tool directories or to tools.yaml, once
   * nothing changed for `debounceMs`. Returns a function that stops watching.
   * Each replica watches its own view of the files; on network volumes
   * without change notifications use the reload subject instead.
   */
  watch(debounceMs: number): () => void {
    const watchers: FSWatcher[] = [];
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const changed = (what: string) => {
      if (stopped) return;
      clearTimeout(timer);
      timer = setTimeout(() => {
        this.reload(`watch: ${what}`).catch((err: unknown) => this.log.error({ err }, 'watch reload failed'));
      }, debounceMs);
    };
    const add = (target: string, recursive: boolean, filter?: (file: string) => boolean) => {
      try {
        const w = watch(target, { recursive, persistent: false }, (_event, file) => {
          const name = file === null ? '' : String(file);
          if (!filter || filter(name)) changed(path.join(target, name));
        });
        w.on('error', (err) => this.log.warn({ err: errorMessage(err), target }, 'watch stopped'));
        watchers.push(w);
      } catch (err) {
        this.log.warn({ err: errorMessage(err), target }, 'cannot watch');
      }
    };
    for (const dir of this.opts.dirs) add(path.resolve(dir), true);
    // Editors replace files (rename), so watch the folder and filter on the name.
    const cfg = path.resolve(this.configPath);
    add(path.dirname(cfg), false, (f) => f === path.basename(cfg));
    this.log.info({ dirs: this.opts.dirs, config: cfg, debounce_ms: debounceMs }, 'watching tool modules and tools.yaml');
    return () => {
      stopped = true;
      clearTimeout(timer);
      for (const w of watchers) w.close();
    };
  }
}

/**
 * The tools.yaml in force: TOOLS_CONFIG when given (it must exist), else the
 * one shipped with the package, else none. Throws ToolsConfigError.
 */
export async function readToolsConfig(configPath?: string): Promise<ToolsConfig> {
  if (configPath !== undefined) return loadToolsConfig(configPath);
  try {
    await access(DEFAULT_TOOLS_CONFIG_PATH);
  } catch {
    return EMPTY_TOOLS_CONFIG;
  }
  return loadToolsConfig(DEFAULT_TOOLS_CONFIG_PATH);
}
