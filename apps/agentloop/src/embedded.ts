/** `npm start`: the whole runtime in one process on PORT (default 2024), data under DATA_DIR (./data). */
import { runMain } from '@agentloop/core';
import { startEmbedded } from './embedded-app.js';

await runMain('agentloop', async () => {
  const server = await startEmbedded();
  const stop = async () => {
    await server.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
});
