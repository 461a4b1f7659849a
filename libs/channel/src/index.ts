/** Chat channels over any AgentLoop (issue 13): filled in by the channel work. */
export {};
