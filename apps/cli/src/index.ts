/** The agentloop CLI (issue 13): filled in by the channel work. */
export {};
