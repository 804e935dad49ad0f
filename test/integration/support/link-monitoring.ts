import { expectStatus, type caller } from './identity.js';

/**
 * A connector-monitoring rule that fires once the connector has been disconnected for `seconds`:
 * how the field-protocol tests see a lost peer reach monitoring. Returns the rule's id.
 */
export async function disconnectedRule(
  call: ReturnType<typeof caller>,
  connectorId: string,
  seconds: number,
): Promise<string> {
  return expectStatus<{ id: string }>(
    await call('POST', `/xapi/v1/connectors/${connectorId}/monitoring-rules`, {
      title: 'link lost',
      type: 'status-duration',
      params: { status: 'disconnected', durationSeconds: seconds },
    }),
    201,
  ).id;
}
