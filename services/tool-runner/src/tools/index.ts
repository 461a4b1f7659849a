import type { ToolDefinition } from '../registry.js';
import type { Sandbox } from '@agentloop/sandbox';
import { createPythonAnalyserTool, createRunBashCommandTool } from './code-sandbox.js';
import { debugFailTool, debugSleepTool } from './debug.js';
import { createHttpFetchTool, type HttpFetchOptions } from './http-fetch.js';
import { createFindFilesTool } from './find-files.js';
import { listWorkspaceFilesTool } from './list-workspace-files.js';
import { nowTool } from './now.js';
import { providerTools, type ProviderToolOptions } from './provider-tools.js';
import { createReadFileTool, type DocumentReader } from './read-file.js';
import { createWriteFileTool } from './write-file.js';

export interface BuiltinToolOptions {
  textFileMaxBytes: number;
  textPreviewBytes: number;
  writeMaxBytes: number;
  findMaxResults: number;
  /** Adds debug_sleep and debug_fail. */
  enableDebug: boolean;
  documentReaders?: readonly DocumentReader[];
  /** Adds http_fetch with these limits (the service always does; tools.yaml decides whether it is enabled). */
  httpFetch?: HttpFetchOptions;
  /** Adds python_analyser and run_bash_command, run in this sandbox (they say so when it is disabled or missing). */
  sandbox?: Sandbox;
  /** Adds web_search, text_to_speech and transcribe_audio (each disabled, saying so, while its provider is unset). */
  providers?: ProviderToolOptions;
}

/** The built-in tools, in the order they are listed to the model. */
export function builtinTools(opts: BuiltinToolOptions): ToolDefinition[] {
  const tools: ToolDefinition[] = [
    nowTool,
    listWorkspaceFilesTool,
    createReadFileTool(opts),
    createWriteFileTool(opts),
    createFindFilesTool({ maxResults: opts.findMaxResults }),
  ];
  if (opts.httpFetch) tools.push(createHttpFetchTool(opts.httpFetch));
  if (opts.sandbox) tools.push(createPythonAnalyserTool(opts.sandbox), createRunBashCommandTool(opts.sandbox));
  if (opts.providers) tools.push(...providerTools(opts.providers));
  if (opts.enableDebug) tools.push(debugSleepTool, debugFailTool);
  return tools;
}
