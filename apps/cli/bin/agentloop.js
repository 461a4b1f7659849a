#!/usr/bin/env node
// The `agentloop` command. A committed shim, so npm links it at install time, before the build
// (`npm run build`, or `npm start`, which builds the CLI too) produces dist/.
import('../dist/main.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND') {
    process.stderr.write('agentloop is not built yet: run `npm run build` in the AgentLoop checkout first.\n');
    process.exit(1);
  }
  throw err;
});
