/**
 * The Channel interface (seed 003): what a chat transport — the terminal, Telegram, any chat app —
 * implements so the shared engine ({@link ChatEngine}) can hold a conversation through it. The engine
 * owns sessions, slash commands and runs; a channel only moves text, files and prompts in and out.
 */

/** A file a person sent (Telegram document, `/upload` path read by the terminal). */
export interface IncomingFile {
  name: string;
  data: Uint8Array;
  mime?: string;
}

/** What a person sent on the channel: text (a message or a slash command), files, or both. */
export interface IncomingMessage {
  text?: string;
  files?: IncomingFile[];
}

/** A tool call as the channel shows it: by display name (seed 003), never by raw arguments. */
export interface ToolActivity {
  /** The tool call id when known (several calls of one step can run side by side). */
  id?: string;
  /** The tool's name (`write_file`). */
  name: string;
  /** What the person sees: the tool's `display_name` when the server gives one, else a readable name. */
  displayName: string;
}

/** A tool call that waits for a person's approval (`__interrupt__` of type tool_approval). */
export interface ApprovalPrompt {
  /** The thread (session) whose run waits, so a chat app's button can name it. */
  threadId?: string;
  tool: string;
  displayName: string;
  args: unknown;
  reason?: string;
  riskLevel?: string;
  /** Decisions the server allows (langchain's review_configs), e.g. approve / reject / edit. */
  allowed: string[];
}

/** A person's answer to an approval prompt. */
export type ApprovalAnswer = { type: 'approve' } | { type: 'reject'; message?: string };

/** A file the agent produced (under `outputs/`), ready to be sent to the person. */
export interface OutgoingFile {
  /** Workspace path, e.g. `outputs/report.pdf`. */
  path: string;
  name: string;
  size?: number;
  /** Absolute download URL on the server. */
  url: string;
  /** The file's bytes (downloaded on demand, so a channel that only links files never fetches them). */
  download(): Promise<Uint8Array>;
}

export type NoticeKind = 'info' | 'success' | 'error';

/** How a tool call's activity ended: it ran (`ok`), failed, or the run stopped before it ran or finished (an approval, a cancel). */
export type ToolOutcome = 'ok' | 'error' | 'stopped';

/**
 * One conversation on a transport. The engine calls these in order for a run: `answerToken` as tokens
 * arrive, `toolStarted`/`toolFinished` around each tool call, `askApproval`/`askQuestion` when the run
 * waits for a person, `answerDone` with the whole answer (render it, e.g. as markdown), `sendFile` for
 * each new output file.
 */
export interface Channel {
  /** The transport's id of this conversation (the terminal: one fixed id; Telegram: the chat id). */
  readonly chatId: string;
  /** A piece of the assistant's answer, as the model streams it. */
  answerToken(text: string): void;
  /** The assistant's whole answer for this step (same text as the tokens, now complete). */
  answerDone(text: string): Promise<void>;
  toolStarted(tool: ToolActivity): void;
  toolFinished(tool: ToolActivity, outcome: ToolOutcome): void;
  /**
   * Asks for a decision. A channel that can wait (the terminal) resolves with it; a chat app that
   * shows buttons resolves with undefined at once: the run stays interrupted and the button press
   * later resumes it (`ChatEngine.resume`), so nothing waits in memory across restarts.
   */
  askApproval(prompt: ApprovalPrompt): Promise<ApprovalAnswer | undefined>;
  /** An `ask_human` question: resolves with the person's answer, or undefined when the next message answers it. */
  askQuestion(question: string): Promise<string | undefined>;
  /** Output of a slash command, a status line or an error. */
  notice(text: string, kind?: NoticeKind): Promise<void>;
  sendFile(file: OutgoingFile): Promise<void>;
}
