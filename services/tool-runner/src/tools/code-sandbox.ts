import { existsSync } from 'node:fs';
import { z } from 'zod';
import { describeLimit, SANDBOX_WORKSPACE, type Sandbox, type SandboxResult } from '@agentloop/sandbox';
import { listWorkspaceFiles } from '@agentloop/workspace';
import { ToolError } from '../errors.js';
import { defineTool, type ToolContext, type ToolDefinition } from '../registry.js';

/** Time kept back from the call's budget so a killed run is still reported before the deadline. */
const REPORT_MARGIN_MS = 500;

export const PythonArgs = z.object({
  code: z
    .string()
    .min(1)
    .max(200_000)
    .describe(
      'Python 3 source to run. The working directory is the workspace (uploads/ holds the user files); save deliverables (charts, tables, reports) under outputs/.',
    ),
});

export const BashArgs = z.object({
  command: z.string().min(1).max(100_000).describe('Shell command (bash) run in the workspace folder, e.g. "ls -la uploads"'),
});

/**
 * The text a model reads: exit status, output (cut at the sandbox's budget with a marker) and the
 * files the run wrote under outputs/. A run stopped by a limit is a tool error naming the limit.
 */
function report(tool: string, r: SandboxResult, newOutputs: readonly string[]): string {
  const parts: string[] = [];
  const limit = describeLimit(r);
  const exit = r.exitCode !== null ? `Exit code: ${r.exitCode}` : `Killed by ${r.signal ?? 'a signal'}`;
  parts.push(limit ? `${tool} ${limit}` : exit);
  if (r.stdout !== '') parts.push(`--- stdout ---\n${r.stdout.replace(/\n$/, '')}`);
  if (r.stderr !== '') parts.push(`--- stderr ---\n${r.stderr.replace(/\n$/, '')}`);
  if (r.droppedBytes > 0) parts.push(`[output cut: ${r.droppedBytes} more bytes beyond the ${r.limits.maxOutputBytes}-byte limit]`);
  if (r.stdout === '' && r.stderr === '' && !limit) parts.push('(no output)');
  if (newOutputs.length > 0) parts.push(`Files written to outputs/ (delivered to the user): ${newOutputs.join(', ')}`);
  const text = parts.join('\n');
  if (limit) throw new ToolError('TOOL_FAILED', text);
  return text;
}

async function runInSandbox(sandbox: Sandbox, tool: string, ctx: ToolContext, argv: string[], stdin?: string): Promise<string> {
  const unavailable = await sandbox.unavailableReason();
  if (unavailable) throw new ToolError('UNAVAILABLE', `${tool} cannot run: ${unavailable}`);
  const started = Date.now();
  const budget = ctx.deadline - started - REPORT_MARGIN_MS;
  const result = await sandbox.run({
    workspaceDir: ctx.workspace.root,
    argv,
    ...(stdin !== undefined ? { stdin } : {}),
    signal: ctx.signal,
    ...(Number.isFinite(budget) && budget > 0 ? { limits: { wallTimeMs: budget } } : {}),
  });
  // Second resolution of mtimes: a file rewritten within the start's second still counts.
  const written = await listWorkspaceFiles(ctx.workspace.root, ['outputs'], { sinceMs: Math.floor(started / 1000) * 1000, maxFiles: 50 });
  ctx.logger.info({ exit_code: result.exitCode, limit: result.limitHit, outputs: written.files.length, ms: Date.now() - started }, 'sandbox run');
  // Host paths never reach the model (the sandbox sees only /workspace, but error text may echo them).
  return ctx.workspace.redact(
    report(
      tool,
      result,
      written.files.map((f) => f.path),
    ),
  );
}

/** What the model is told about the network: none, or HTTP(S) through the proxy to the allowed destinations. */
function networkNote(sandbox: Sandbox): string {
  const allow = sandbox.config.networkAllow.map((e) => e.text);
  return allow.length === 0 ? 'No network access' : `Network: HTTP(S) only, through the preset proxy, to ${allow.join(', ')}`;
}

/** python_analyser (seed 003): Python in the sandbox, deliverables under outputs/ become the run's artifacts. */
export function createPythonAnalyserTool(sandbox: Sandbox): ToolDefinition<typeof PythonArgs> {
  return defineTool({
    name: 'python_analyser',
    description:
      'Run Python 3 code in an isolated sandbox to analyse data. The working directory is the workspace ' +
      `(${SANDBOX_WORKSPACE}): user files are in uploads/; write charts, tables and reports to outputs/ — they are delivered to the user. ` +
      `Print results to stdout. ${networkNote(sandbox)}; time, memory, processes and output are limited. Only the Python standard library is guaranteed.`,
    schema: PythonArgs,
    metadata: {
      category: 'code',
      tags: ['code', 'python', 'analysis'],
      idempotent: false,
      displayName: 'Running Python code…',
      availableToSubagent: false,
    },
    execute: (args, ctx) => runInSandbox(sandbox, 'python_analyser', ctx, [sandbox.config.pythonPath, '-'], args.code),
  });
}

/** run_bash_command (seed 001 §7.3): a shell command in the sandbox; the approval checker rates it first. */
export function createRunBashCommandTool(sandbox: Sandbox): ToolDefinition<typeof BashArgs> {
  const shell = existsSync('/usr/bin/bash') ? '/usr/bin/bash' : '/bin/sh';
  return defineTool({
    name: 'run_bash_command',
    description:
      'Run a shell command in an isolated sandbox whose working directory is the workspace (uploads/, outputs/, temp/). ' +
      `${networkNote(sandbox)}; only the workspace is writable; time, memory, processes and output are limited.`,
    schema: BashArgs,
    metadata: { category: 'code', tags: ['code', 'shell'], idempotent: false, displayName: 'Running a shell command…', availableToSubagent: false },
    execute: (args, ctx) => runInSandbox(sandbox, 'run_bash_command', ctx, [shell, '-c', args.command]),
  });
}
