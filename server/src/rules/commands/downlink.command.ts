import type { RuleCommandPlugin } from './command.js';
import { isText, isUuid } from './command.js';

const HEX = /^(?:[0-9a-f]{2})+$/i;

/**
 * `{type:'downlink', deviceId, fPort? (with bytes: required where the connector carries one), bytes? (hex, or base64 with encoding), data?, confirmed?}`:
 * queues a downlink to a device of the rule's account (docs/lorawan.md, Downlinks). `data` is
 * encoded by the device driver's codec when the rule fires, with placeholders rendered first.
 */
export const downlinkCommand: RuleCommandPlugin = {
  type: 'downlink',
  async validate(c, v) {
    if (!isUuid(c.deviceId)) return 'deviceId (a uuid) is required';
    if ((c.bytes === undefined) === (c.data === undefined)) return 'give exactly one of bytes and data';
    if (
      c.fPort !== undefined &&
      !(Number.isInteger(c.fPort) && Number(c.fPort) >= 1 && Number(c.fPort) <= 223)
    )
      return 'fPort must be 1 to 223';
    // Like a downlink sent from the device: a port only where the device's connector carries one.
    if (c.bytes !== undefined && c.fPort === undefined && (await v.downlinkNeedsFPort(c.deviceId)))
      return { missingProperty: 'fPort', message: 'is required with bytes for this device’s connector' };
    if (c.encoding !== undefined && c.encoding !== 'hex' && c.encoding !== 'base64')
      return 'encoding must be hex or base64';
    if (c.bytes !== undefined && !(isText(c.bytes, 4200) && (c.encoding === 'base64' || HEX.test(c.bytes))))
      return 'bytes must be hex (or base64 with encoding: base64)';
    if (c.confirmed !== undefined && typeof c.confirmed !== 'boolean')
      return 'confirmed must be true or false';
    return undefined;
  },
  async run(c, ctx) {
    const downlink = await ctx.downlinks.queueInAccount(
      ctx.accountId,
      String(c.deviceId),
      {
        ...(typeof c.fPort === 'number' ? { fPort: c.fPort } : {}),
        ...(typeof c.bytes === 'string' ? { bytes: c.bytes } : {}),
        ...(c.encoding === 'base64' ? { encoding: 'base64' as const } : {}),
        ...(c.data !== undefined ? { data: ctx.renderValue(c.data) } : {}),
        confirmed: c.confirmed === true,
      },
      `rule:${ctx.ruleId}`,
      ctx.permissionScopeIds,
    );
    return { deviceId: c.deviceId, downlinkId: downlink.id, status: downlink.status };
  },
};
