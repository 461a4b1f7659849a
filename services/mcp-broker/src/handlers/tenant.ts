import { Headers, type BusMessage } from '@agentloop/bus';
import { McpBrokerError } from '../errors.js';

/** The caller's tenant: the request body's, which must agree with the tenant header when both are set. */
export function requestTenant(msg: BusMessage, bodyTenant: string): string {
  const header = msg.headers[Headers.tenant];
  if (bodyTenant && header && bodyTenant !== header) throw new McpBrokerError('PERMISSION_DENIED', 'Permission denied: the request names another tenant than its caller');
  return bodyTenant || header || '';
}
