import type { ChatEngine } from './chat-engine.js';
import { ClusterReloadError, describeReload, reloadCluster } from './cluster-reload.js';
import { CLEAN_AFTER_DAYS, type SessionInfo } from './sessions.js';
import { describeBudgets, fetchTenantUsage, type TenantUsage } from './tenant-usage.js';
import { formatTokens, sessionTokens, tenantTokens } from './usage.js';

/** What a command asks of the channel afterwards. */
export interface CommandResult {
  /** `/exit`, `/quit`: the person is done (the terminal exits; a bot just says goodbye). */
  exit?: boolean;
}

export interface ParsedCommand {
  name: string;
  args: string[];
  /** Everything after the command name, as typed (titles keep their spaces). */
  rest: string;
}

interface Command {
  name: string;
  aliases?: string[];
  usage: string;
  summary: string;
  run(engine: ChatEngine, cmd: ParsedCommand): Promise<CommandResult | void>;
}

/** `/name args...`, or undefined for a message that is not a slash command. `/compact` stays a command. */
export function parseCommand(text: string): ParsedCommand | undefined {
  const m = /^\/([A-Za-z][\w-]*)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!m) return undefined;
  const rest = (m[2] ?? '').trim();
  return { name: (m[1] ?? '').toLowerCase(), args: rest ? rest.split(/\s+/) : [], rest };
}

const label = (s: SessionInfo) => `${s.threadId.slice(0, 8)}  ${s.title ?? '(untitled)'}`;

async function listSessions(engine: ChatEngine): Promise<void> {
  const [sessions, current] = await Promise.all([engine.sessions.list(), engine.sessions.current()]);
  if (sessions.length === 0) return void (await engine.channel.notice('No sessions yet: send a message or /new [title].'));
  const lines = sessions.map(
    (s, i) => `${s.threadId === current?.threadId ? '*' : ' '} ${String(i + 1).padStart(2)}. ${label(s)}  (${s.status}, updated ${s.updatedAt})`,
  );
  await engine.channel.notice(['Sessions (/switch <index>, /load <id-prefix>):', ...lines].join('\n'));
}

async function newSession(engine: ChatEngine, title: string | undefined, what: string): Promise<SessionInfo> {
  const s = await engine.sessions.create(title);
  await engine.channel.notice(`✓ ${what}: ${label(s)} (${s.threadId})`, 'success');
  return s;
}

export const COMMANDS: Command[] = [
  {
    name: 'help',
    usage: '/help',
    summary: 'Show the commands',
    async run(engine) {
      const width = Math.max(...COMMANDS.map((c) => c.usage.length));
      await engine.channel.notice(['Commands:', ...COMMANDS.map((c) => `  ${c.usage.padEnd(width)}  ${c.summary}`)].join('\n'));
    },
  },
  {
    name: 'usage',
    usage: '/usage',
    summary: 'Tokens of this session and of the tenant',
    async run(engine) {
      const current = await engine.sessions.current();
      const session = current ? formatTokens(await sessionTokens(engine.client, current.threadId)) : 'no session yet';
      const lines = [`Session: ${session}`];
      let ledger: TenantUsage | undefined;
      try {
        ledger = await fetchTenantUsage(engine.options.access);
      } catch (err) {
        lines.push(`(the tenant's usage could not be read: ${err instanceof Error ? err.message : String(err)})`);
      }
      if (ledger) {
        lines.push(
          `Tenant ${ledger.tenantId} today: ${formatTokens(ledger.today)}`,
          `Tenant ${ledger.tenantId} this month (${ledger.from} to ${ledger.to}): ${formatTokens(ledger.month)}`,
          `Budget: ${describeBudgets(ledger.budget)}`,
        );
      } else {
        // A server without GET /usage: the threads this key can see are all there is to count.
        const tenant = await tenantTokens(engine.client);
        lines.push(`Tenant:  ${formatTokens(tenant.tokens)} over ${tenant.threads} thread(s) visible to this API key`);
      }
      await engine.channel.notice(lines.join('\n'));
    },
  },
  {
    name: 'compact',
    usage: '/compact',
    summary: 'Summarize the conversation so far to save context',
    async run(engine) {
      // The server compacts when a run's user message is exactly "/compact" (orchestrator compaction).
      const outcome = await engine.send('/compact');
      if (outcome.status === 'done') await engine.channel.notice('✓ Conversation compacted', 'success');
    },
  },
  {
    name: 'clear',
    usage: '/clear',
    summary: 'Start a new, empty conversation (the old session stays listed)',
    async run(engine) {
      await newSession(engine, undefined, 'Conversation cleared, new session');
    },
  },
  {
    name: 'reset',
    usage: '/reset',
    summary: 'Delete this session with its workspace files, and start a new one',
    async run(engine) {
      const current = await engine.sessions.current();
      if (current) await engine.sessions.remove(current.threadId);
      await newSession(engine, undefined, `Reset${current ? ` (deleted ${current.threadId.slice(0, 8)} and its workspace)` : ''}, new session`);
    },
  },
  {
    name: 'new',
    usage: '/new [title]',
    summary: 'Start a new session, optionally titled',
    async run(engine, cmd) {
      await newSession(engine, cmd.rest || undefined, 'New session');
    },
  },
  { name: 'list', aliases: ['sessions'], usage: '/list, /sessions', summary: 'List the sessions', run: listSessions },
  {
    name: 'switch',
    usage: '/switch <index>',
    summary: 'Switch to a session by its /list index',
    async run(engine, cmd) {
      const index = Number(cmd.args[0]);
      if (!Number.isInteger(index) || index < 1) return void (await engine.channel.notice('Usage: /switch <index> (a number from /list)', 'error'));
      const s = await engine.sessions.switchTo(index);
      if (!s) return void (await engine.channel.notice(`No session #${index}: /list shows the sessions.`, 'error'));
      await engine.channel.notice(`✓ Switched to ${label(s)}`, 'success');
    },
  },
  {
    name: 'load',
    usage: '/load <id-prefix>',
    summary: 'Load a session by the start of its id',
    async run(engine, cmd) {
      const prefix = cmd.args[0];
      if (!prefix) return void (await engine.channel.notice('Usage: /load <id-prefix> (ids are in /sessions)', 'error'));
      const { session, matches } = await engine.sessions.load(prefix);
      if (session) return void (await engine.channel.notice(`✓ Loaded session: ${session.threadId}`, 'success'));
      const why = matches.length ? `${matches.length} sessions start with it, type more of the id` : 'no session starts with it';
      await engine.channel.notice(`✗ Session not found: ${prefix} (${why})`, 'error');
    },
  },
  {
    name: 'current',
    usage: '/current',
    summary: 'Show the current session',
    async run(engine) {
      const s = await engine.sessions.current();
      await engine.channel.notice(s ? `Current session: ${s.threadId}  ${s.title ?? '(untitled)'}` : 'No active session');
    },
  },
  {
    name: 'name',
    usage: '/name <title>',
    summary: 'Set the title of the current session',
    async run(engine, cmd) {
      if (!cmd.rest) return void (await engine.channel.notice('Usage: /name <title>', 'error'));
      const s = await engine.sessions.rename(cmd.rest);
      await engine.channel.notice(`✓ Session ${s.threadId.slice(0, 8)} is now "${s.title ?? cmd.rest}"`, 'success');
    },
  },
  {
    name: 'reload',
    usage: '/reload',
    summary: 'Reload tools, skills, MCP servers and prompts',
    async run(engine) {
      try {
        const results = await reloadCluster(engine.options.access);
        await engine.channel.notice(describeReload(results), results.length > 0 && results.every((r) => r.ok) ? 'success' : 'error');
      } catch (err) {
        if (!(err instanceof ClusterReloadError)) throw err;
        const hint = err.status === 403 ? ' (an operator with an admin key can run it)' : '';
        await engine.channel.notice(`✗ Reload refused: ${err.message}${hint}`, 'error');
      }
    },
  },
  {
    name: 'clean',
    usage: '/clean [days]',
    summary: `Delete sessions (and workspaces) older than ${CLEAN_AFTER_DAYS} days, or [days]`,
    async run(engine, cmd) {
      const days = cmd.args[0] === undefined ? CLEAN_AFTER_DAYS : Number(cmd.args[0]);
      if (!Number.isFinite(days) || days < 0) return void (await engine.channel.notice('Usage: /clean [days] (a number of days, default 7)', 'error'));
      const removed = await engine.sessions.clean(days);
      await engine.channel.notice(`✓ Cleaned up ${removed.length} old session(s)${removed.length ? `: ${removed.map(label).join(', ')}` : ''}`, 'success');
    },
  },
  {
    name: 'upload',
    usage: '/upload <path>...',
    summary: 'Upload files to the session workspace',
    async run(engine, cmd) {
      const read = engine.options.readLocalFile;
      if (!read) return void (await engine.channel.notice('Send the files as attachments to upload them.', 'error'));
      if (cmd.args.length === 0) return void (await engine.channel.notice('Usage: /upload <path>...', 'error'));
      const files = [];
      for (const p of cmd.args) {
        try {
          files.push(await read(p));
        } catch (err) {
          await engine.channel.notice(`✗ Failed: ${p} (${(err as Error).message})`, 'error');
        }
      }
      if (files.length) await engine.upload(files);
    },
  },
  {
    name: 'exit',
    aliases: ['quit'],
    usage: '/exit, /quit',
    summary: 'Leave',
    async run() {
      return { exit: true };
    },
  },
];

/** Runs a parsed command; an unknown one is named, with the valid ones. */
export async function runCommand(engine: ChatEngine, cmd: ParsedCommand): Promise<CommandResult> {
  const command = COMMANDS.find((c) => c.name === cmd.name || c.aliases?.includes(cmd.name));
  if (!command) {
    const valid = COMMANDS.flatMap((c) => [c.name, ...(c.aliases ?? [])]).map((n) => `/${n}`);
    await engine.channel.notice(`Unknown command: /${cmd.name}. Valid commands: ${valid.join(' ')}`, 'error');
    return {};
  }
  return (await command.run(engine, cmd)) ?? {};
}
