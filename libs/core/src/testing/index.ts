export { lockedByAnotherThread, type LockHeldElsewhere } from './sqlite-lock.js';
