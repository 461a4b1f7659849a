import { setTimeout as delay } from 'node:timers/promises';
import { z } from 'zod';
import { defineTool } from '../registry.js';

export const DebugSleepArgs = z.object({
  ms: z.number().int().min(0).max(3_600_000).describe('Milliseconds to wait'),
});
export type DebugSleepArgs = z.infer<typeof DebugSleepArgs>;

export const DebugFailArgs = z.object({
  message: z.string().default('debug_fail was called').describe('Message of the error to throw'),
});
export type DebugFailArgs = z.infer<typeof DebugFailArgs>;

/** Waits `ms`, stopping when the call's budget runs out (exercises deadlines). TOOLS_ENABLE_DEBUG only. */
export const debugSleepTool = defineTool({
  name: 'debug_sleep',
  description: 'Debug tool: wait the given number of milliseconds, then answer.',
  schema: DebugSleepArgs,
  metadata: { category: 'debug', tags: ['debug'], idempotent: true, displayName: 'Debug Sleep', availableToSubagent: false },
  async execute(args, ctx) {
    await delay(args.ms, undefined, { signal: ctx.signal });
    return `Slept ${args.ms} ms`;
  },
});

/** Throws a plain Error (exercises the error boundary). TOOLS_ENABLE_DEBUG only. */
export const debugFailTool = defineTool({
  name: 'debug_fail',
  description: 'Debug tool: throw an error with the given message.',
  schema: DebugFailArgs,
  metadata: { category: 'debug', tags: ['debug'], idempotent: true, displayName: 'Debug Fail', availableToSubagent: false },
  // Throws synchronously on purpose: the boundary must catch that form too.
  execute(args): Promise<string> {
    throw new Error(args.message);
  },
});
