/** Sandboxed code execution (issue 15): filled in by the sandbox work. */
export {};
