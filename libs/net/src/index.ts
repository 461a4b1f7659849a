export { envAllowList, internalAddressReason, isAllowed, normalizeHost, parseAllowList, type AllowEntry } from './addresses.js';
export { HostUnresolvedError, UrlRefusedError } from './errors.js';
export {
  pinnedLookup,
  staticUrlRefusal,
  systemLookup,
  vetUrl,
  vetUrlStatic,
  type GuardOptions,
  type HostLookup,
  type VettedTarget,
  type VetWording,
} from './guard.js';
export { requestPinned, type PinnedRequestOptions } from './pinned-request.js';
