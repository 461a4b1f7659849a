import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';

/**
 * Makes a call's progress notifications reach its `onprogress` before its result settles the call.
 *
 * The SDK (1.x Protocol) runs a notification's handler a microtask after reading it but settles a
 * response at once, dropping the call's progress handler; when a server's last progress
 * notification and the result arrive together (one read, common under load), that notification is
 * lost ("unknown token"). Handing responses to the SDK one macrotask later lets the pending
 * notification handlers run first; responses keep their order among themselves, and requests
 * and notifications are not delayed. A close is deferred the same way, so a result read just before
 * the connection closed still settles its call. Call after `client.connect(transport)` (which sets
 * the handlers).
 */
export function deliverResponsesAfterNotifications(transport: Transport): void {
  const deliver = transport.onmessage;
  if (!deliver) return;
  transport.onmessage = (message, extra) => {
    const isResponse = 'id' in message && ('result' in message || 'error' in message) && !('method' in message);
    if (isResponse) setImmediate(() => deliver(message, extra));
    else deliver(message, extra);
  };
  const closed = transport.onclose;
  if (closed) transport.onclose = () => setImmediate(closed);
}
