import { z } from 'zod';
import { defineTool } from '../registry.js';
import { formatUtc } from './format.js';

export const NowArgs = z.object({});
export type NowArgs = z.infer<typeof NowArgs>;

/** Current UTC time, in the seed's "YYYY-MM-DD HH:MM:SS UTC" form and ISO 8601. */
export const nowTool = defineTool({
  name: 'now',
  description: 'Get the current date and time in UTC (human-readable and ISO 8601).',
  schema: NowArgs,
  usesWorkspace: false,
  metadata: { category: 'system', tags: ['time', 'date'], idempotent: true, displayName: 'Current Time', availableToSubagent: true },
  execute() {
    const d = new Date();
    return Promise.resolve(`Current time: ${formatUtc(d)}\nISO 8601: ${d.toISOString()}`);
  },
});
