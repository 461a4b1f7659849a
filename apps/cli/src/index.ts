/** The agentloop CLI (issue 13): the terminal channel, usable by other programs too. */
export { TerminalChannel, TERMINAL_CHAT_ID } from './terminal-channel.js';
export { chat, type ChatOptions } from './chat.js';
