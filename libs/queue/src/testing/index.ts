/** Test harness for JobQueue implementations (vitest). Not part of the runtime API. */
export { queueContract } from '../contract.js';
