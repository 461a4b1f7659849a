#!/usr/bin/env node
/** `agentloop` (issue 13): filled in by the channel work. */
process.stderr.write('agentloop: not built yet\n');
process.exitCode = 1;
