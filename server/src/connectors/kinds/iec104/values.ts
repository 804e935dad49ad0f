import type { LinkContext } from '../../links/link.types.js';
import type { Asdu } from './asdu.js';
import { fits, pointKey } from './points.js';
import type { Iec104Settings } from './settings.js';

/** Log lines of one kind (unmapped address, unknown type, malformed ASDU) per connection, at most. */
const MAX_NOTICES = 20;

/**
 * The values of monitoring ASDUs as packets: one per information object, to the device and state
 * its point list row names, `{"<state>": value}` for the default JSON parser, with the address,
 * cause of transmission and quality as `_meta` fields and the CP56Time2a tag as the packet's
 * `receivedAt` metadata. What cannot be stored is logged, a bounded number of times per connection.
 */
export class Iec104Values {
  private readonly noticed = new Map<string, number>();

  constructor(
    private readonly ctx: LinkContext,
    private readonly s: Iec104Settings,
  ) {}

  async store(asdu: Asdu & { kind: 'monitoring' }): Promise<void> {
    for (const object of asdu.objects) {
      const key = pointKey(asdu.ca, object.ioa);
      const point = this.s.points.monitoring.get(key);
      if (!point) {
        this.notice(
          'unmapped',
          key,
          `Information object ${key} (${asdu.typeName}) is not in the point list; ignored`,
        );
        continue;
      }
      if (!fits(point, asdu.family)) {
        this.notice(
          'type',
          key,
          `Information object ${key} sent ${asdu.typeName}, the point list says ${point.type}; ignored`,
        );
        continue;
      }
      const value =
        typeof object.value === 'number' && point.scale !== 1 ? object.value * point.scale : object.value;
      await this.ctx.packet({
        deviceKey: point.deviceId,
        payload: Buffer.from(JSON.stringify({ [point.state]: value })),
        meta: {
          ...(object.time ? { receivedAt: object.time.toISOString() } : {}),
          fields: {
            ioa: object.ioa,
            commonAddress: asdu.ca,
            typeId: asdu.typeId,
            cot: asdu.cot,
            originator: asdu.originator,
            test: asdu.test,
            ...object.quality,
            ...(object.timeInvalid !== undefined ? { timeInvalid: object.timeInvalid } : {}),
          },
        },
      });
    }
  }

  malformed(message: string): void {
    this.notice('malformed', message, `Malformed IEC 104 ASDU skipped: ${message}`);
  }

  unknownType(typeId: number): void {
    this.notice(
      'unknown',
      String(typeId),
      `IEC 104 type identification ${typeId} is not supported; ASDU skipped`,
    );
  }

  /** Logs once per subject, and at most MAX_NOTICES times per kind, for one connection. */
  private notice(kind: string, subject: string, message: string): void {
    const seen = `${kind}|${subject}`;
    if (this.noticed.has(seen)) return;
    const count = this.noticed.get(kind) ?? 0;
    this.noticed.set(kind, count + 1);
    if (count > MAX_NOTICES) return;
    this.noticed.set(seen, 1);
    if (count === MAX_NOTICES)
      return this.ctx.log(
        'warn',
        `More IEC 104 notices of this kind on this connection are not logged: ${message}`,
      );
    this.ctx.log('warn', message);
  }
}
