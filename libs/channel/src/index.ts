/** Chat channels over any AgentLoop (issue 13): the Channel interface, sessions as threads, slash commands. */
export type { ApprovalAnswer, ApprovalPrompt, Channel, IncomingFile, IncomingMessage, NoticeKind, OutgoingFile, ToolActivity, ToolOutcome } from './channel.js';
export { ChatEngine, type ChatEngineOptions } from './chat-engine.js';
export { COMMANDS, parseCommand, runCommand, type CommandResult, type ParsedCommand } from './commands.js';
export { CHANNEL_STREAM_MODES, RunDriver, textOf, type RunSettings, type TurnOutcome } from './run-driver.js';
export { elicitationPromptOf, elicitationQuestion, elicitationResume, type ElicitationPrompt, type ElicitationResume } from './elicitation.js';
export { approvalPromptOf, approvalResume, interruptsOf, questionOf, threadInterrupts, type PendingInterrupt } from './interrupts.js';
export { ClusterReloadError, describeReload, reloadCluster, type ServiceReload } from './cluster-reload.js';
export { CLEAN_AFTER_DAYS, Sessions, type SessionInfo } from './sessions.js';
export { JsonFileSessionState, MemorySessionState, type ChatState, type SessionStateStore } from './session-state.js';
export { displayNameOf, readableToolName } from './tool-names.js';
export { formatTokens, sessionTokens, tenantTokens, threadTokens, type TokenCount } from './usage.js';
export { describeBudgets, fetchTenantUsage, type BudgetFigure, type TenantUsage } from './tenant-usage.js';
export { WorkspaceFiles, WorkspaceFilesError, type ServerAccess, type UploadedFile, type WorkspaceFile } from './workspace-files.js';
export { TELEGRAM_CLIENT_NAME, TelegramBot, type TelegramBotOptions } from './telegram/telegram-bot.js';
export { TelegramChannel, TELEGRAM_MAX_UPLOAD_BYTES, type ChannelLogger } from './telegram/telegram-channel.js';
export { ThreadMetadataSessionState } from './telegram/thread-session-state.js';
export { markdownToTelegram, splitText, escapeHtml, TELEGRAM_MAX_MESSAGE } from './telegram/format.js';
export { approvalButtons, parseApprovalPress, type ApprovalPress } from './telegram/callbacks.js';
