import type { LinkContext } from '../../links/link.types.js';
import type { Asdu } from './asdu.js';
import { fits, pointKey } from './points.js';
import type { Iec104Settings } from './settings.js';

/** Log lines of one kind (unmapped address, unknown type, malformed ASDU) per connection, at most. */
const MAX_NOTICES = 20;
/** Time-tagged values remembered across reconnects, to recognise those an outstation sends again. */
const MAX_REMEMBERED = 10_000;

/**
 * The time-tagged values stored by this link, newest last, across its reconnects: an outstation
 * sends the I-frames we had not acknowledged again on the next connection (we acknowledge every
 * w frames or after t2, so an abrupt drop leaves up to w stored but unacknowledged). A value with
 * the same point, type, time tag, value and quality is that resend, not a new event.
 * Values without a time tag (interrogation answers, cyclic values) cannot be told from a new reading
 * of the same value and are stored again.
 */
class StoredEvents {
  private readonly stored = new Set<string>();

  has(identity: string): boolean {
    return this.stored.has(identity);
  }

  add(identity: string): void {
    this.stored.add(identity);
    if (this.stored.size > MAX_REMEMBERED) this.stored.delete(this.stored.values().next().value!);
  }
}

/**
 * The values of monitoring ASDUs as packets: one per information object, to the device and state
 * its point list row names, `{"<state>": value}` for the default JSON parser, with the address,
 * cause of transmission and quality as `_meta` fields and the CP56Time2a tag as the packet's
 * `receivedAt` metadata. What cannot be stored is logged, a bounded number of times per connection.
 * A time-tagged value the outstation sends again after a reconnect is stored once (StoredEvents).
 */
export class Iec104Values {
  private readonly noticed = new Map<string, number>();
  private readonly events: StoredEvents;

  constructor(
    private readonly ctx: LinkContext,
    private readonly s: Iec104Settings,
  ) {
    this.events = ctx.kept('iec104.storedEvents', () => new StoredEvents());
  }

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
      const identity = object.time
        ? JSON.stringify([key, asdu.typeId, object.time.getTime(), object.value, object.quality])
        : undefined;
      if (identity && this.events.has(identity)) {
        this.notice(
          'resent',
          key,
          `Information object ${key} sent a value with the same time tag again (after a reconnect); stored once`,
          'info',
        );
        continue;
      }
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
      if (identity) this.events.add(identity);
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
  private notice(kind: string, subject: string, message: string, level: 'info' | 'warn' = 'warn'): void {
    const seen = `${kind}|${subject}`;
    if (this.noticed.has(seen)) return;
    const count = this.noticed.get(kind) ?? 0;
    this.noticed.set(kind, count + 1);
    if (count > MAX_NOTICES) return;
    this.noticed.set(seen, 1);
    if (count === MAX_NOTICES)
      return this.ctx.log(
        level,
        `More IEC 104 notices of this kind on this connection are not logged: ${message}`,
      );
    this.ctx.log(level, message);
  }
}
