export { startEmbedded, type EmbeddedOptions, type EmbeddedServer } from './embedded-app.js';
export { startService, serviceCommand, SERVICES, type ServiceName, type ServiceProcess, type StartServiceOptions } from './supervisor.js';
