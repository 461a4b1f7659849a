export type { RepositoryContext } from './context.js';
export { ThreadRepository } from './threads.js';
export { RunRepository } from './runs.js';
export { ToolEffectRepository } from './tool-effects.js';
export { UploadRepository } from './uploads.js';
export { AuditRepository } from './audit.js';
export { WebhookRepository } from './webhooks.js';
export { AssistantRepository } from './assistants.js';
