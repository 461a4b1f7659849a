/** Test harnesses for Bus / RunEventStream implementations (vitest). Not part of the runtime API. */
export { busContract, runEventStreamContract } from '../contract.js';
