import { Type } from 'typebox';
import { AlarmLogReply, AlarmSeverity } from '../alarms/alarm-log.schemas.js';
import { Timestamp, Uuid } from '../platform/http/schemas.js';

export const OverviewQuery = Type.Object({ accountId: Type.Optional(Uuid) }, { additionalProperties: false });

const Count = Type.Integer({ minimum: 0 });

export const OverviewReply = Type.Object(
  {
    accountId: Uuid,
    generatedAt: Timestamp,
    devices: Type.Optional(
      Type.Object(
        {
          total: Count,
          byHealth: Type.Array(Type.Object({ state: Type.String(), count: Count }), {
            description:
              'Health states as devices show them (`Unknown` before the first packet), most frequent first.',
          }),
        },
        { description: 'With VirtualDevice.read; devices within the caller’s permission scopes.' },
      ),
    ),
    connectors: Type.Optional(
      Type.Object({ total: Count, active: Count, inactive: Count }, { description: 'With connector.read.' }),
    ),
    ingest: Type.Optional(
      Type.Object(
        {
          minutes: Type.Array(Type.Object({ minute: Timestamp, packetsIn: Count, packetsFailed: Count }), {
            description: 'The last 60 minutes (UTC), oldest first; the last one is the current minute.',
          }),
          packetsIn: Count,
          packetsFailed: Count,
        },
        { description: 'With connector.read: packets the account’s connectors stored and refused.' },
      ),
    ),
    alarms: Type.Optional(
      Type.Object(
        {
          open: Count,
          bySeverity: Type.Record(AlarmSeverity, Count),
          recent: Type.Array(AlarmLogReply, {
            description: 'The newest open or acknowledged entries by last seen, at most 5.',
          }),
        },
        { description: 'With alarmLog.read; entries visible within the caller’s permission scopes.' },
      ),
    ),
    gateways: Type.Optional(
      Type.Object(
        {
          total: Count,
          offline: Count,
          offlineList: Type.Array(
            Type.Object({
              id: Uuid,
              title: Type.String(),
              eui: Type.String(),
              lastSeenAt: Type.Union([Timestamp, Type.Null()]),
              statusChangedAt: Type.Union([Timestamp, Type.Null()]),
            }),
            { description: 'Offline gateways, most recently seen first, at most 5.' },
          ),
        },
        { description: 'With gateway.read; gateways within the caller’s permission scopes.' },
      ),
    ),
  },
  { description: 'Parts the caller has no permission for are left out.' },
);
