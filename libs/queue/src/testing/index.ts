/** Test harness for JobQueue and CronScheduler implementations (vitest). Not part of the runtime API. */
export { queueContract } from '../contract.js';
export { schedulerContract } from '../scheduler-contract.js';
export { fairnessContract } from '../fairness-contract.js';
