export { storeContract, type StoreTestHarness, type StoreTestDatabase } from './contract.js';
