import type { Interface as ReadLine } from 'node:readline/promises';
import ora, { type Ora } from 'ora';
import pc from 'picocolors';
import type { ApprovalAnswer, ApprovalPrompt, Channel, NoticeKind, OutgoingFile, ToolActivity, ToolOutcome } from '@agentloop/channel';
import { renderMarkdown } from './markdown.js';

/** The terminal's one conversation: sessions of the CLI are told apart by thread, not by chat. */
export const TERMINAL_CHAT_ID = 'terminal';

/**
 * The terminal as a Channel: tokens printed as they come, then the answer re-drawn as rendered
 * markdown; a spinner per running tool (by display name); approvals and questions asked inline.
 */
export class TerminalChannel implements Channel {
  readonly chatId = TERMINAL_CHAT_ID;
  private streamedText = '';
  private spinner: Ora | undefined;
  private readonly tools = new Map<string, ToolActivity>();
  /** Aborts the prompt in progress (Ctrl-C during an approval or a question). */
  private promptAbort: AbortController | undefined;

  constructor(
    private readonly rl: ReadLine,
    private readonly out: NodeJS.WriteStream = process.stdout,
  ) {}

  answerToken(text: string): void {
    if (!this.streamedText) this.out.write(pc.cyan('Agent> '));
    this.streamedText += text;
    this.out.write(text);
  }

  async answerDone(text: string): Promise<void> {
    const rendered = renderMarkdown(text);
    if (this.streamedText && this.out.isTTY) {
      // Replace the raw streamed tokens with the rendered markdown: move up over the lines they took.
      const rows = this.rowsOf(`Agent> ${this.streamedText}`);
      this.out.write(`\r${rows > 1 ? `\x1b[${rows - 1}A` : ''}\x1b[J`);
    } else if (this.streamedText) {
      this.out.write('\n');
    }
    this.out.write(`${pc.cyan('Agent>')} ${rendered}\n`);
    this.streamedText = '';
  }

  toolStarted(tool: ToolActivity): void {
    this.tools.set(tool.id ?? tool.name, tool);
    this.spin();
  }

  toolFinished(tool: ToolActivity, outcome: ToolOutcome): void {
    this.tools.delete(tool.id ?? tool.name);
    this.spinner?.stop();
    this.spinner = undefined;
    const mark = outcome === 'ok' ? pc.green('✔') : outcome === 'error' ? pc.red('✖') : pc.yellow('⏸');
    const note = outcome === 'stopped' ? pc.dim(' (waiting)') : outcome === 'error' ? pc.dim(' (failed)') : '';
    this.out.write(`${mark} ${tool.displayName}${note}\n`);
    this.spin();
  }

  async askApproval(prompt: ApprovalPrompt): Promise<ApprovalAnswer> {
    const args = JSON.stringify(prompt.args ?? {}, null, 2);
    const lines = [
      pc.yellow(`⚠ Approval needed: ${prompt.displayName} (${prompt.tool})`),
      ...(prompt.reason ? [`  Reason: ${prompt.reason}${prompt.riskLevel ? ` [${prompt.riskLevel}]` : ''}`] : []),
      ...args.split('\n').map((l) => `  ${pc.dim(l)}`),
    ];
    this.out.write(lines.join('\n') + '\n');
    for (;;) {
      const answer = (await this.ask('Approve? [y]es / [n]o: ')).trim().toLowerCase();
      if (['y', 'yes', 'approve'].includes(answer)) return { type: 'approve' };
      if (['n', 'no', 'reject'].includes(answer)) {
        const message = (await this.ask('Why (optional, told to the agent): ')).trim();
        return { type: 'reject', ...(message ? { message } : {}) };
      }
      this.out.write('Answer y or n.\n');
    }
  }

  async askQuestion(question: string): Promise<string> {
    this.out.write(`${pc.magenta('? The agent asks:')} ${question}\n`);
    return this.ask('Answer> ');
  }

  async notice(text: string, kind: NoticeKind = 'info'): Promise<void> {
    const paint = kind === 'error' ? pc.red : kind === 'success' ? pc.green : (s: string) => s;
    this.out.write(paint(text) + '\n');
  }

  async sendFile(file: OutgoingFile): Promise<void> {
    const size = file.size === undefined ? '' : ` (${file.size} bytes)`;
    this.out.write(`${pc.blue('📎')} ${file.path}${size}  ${pc.dim(file.url)}\n`);
  }

  /** Ctrl-C while the agent waits for an answer: the prompt gives up. */
  abortPrompt(): boolean {
    if (!this.promptAbort) return false;
    this.promptAbort.abort();
    return true;
  }

  private async ask(query: string): Promise<string> {
    this.promptAbort = new AbortController();
    try {
      return await this.rl.question(query, { signal: this.promptAbort.signal });
    } finally {
      this.promptAbort = undefined;
    }
  }

  private spin(): void {
    if (this.tools.size === 0) return;
    const text = [...this.tools.values()].map((t) => t.displayName).join(', ');
    if (this.spinner) this.spinner.text = text;
    else this.spinner = ora({ text, stream: this.out, discardStdin: false }).start();
  }

  private rowsOf(text: string): number {
    const cols = this.out.columns || 80;
    // eslint-disable-next-line no-control-regex
    const plain = text.replace(/\x1b\[[0-9;]*m/g, '');
    return plain.split('\n').reduce((n, line) => n + Math.max(1, Math.ceil([...line].length / cols)), 0);
  }
}
