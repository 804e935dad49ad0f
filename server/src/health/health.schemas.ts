import { Type } from 'typebox';
import { Timestamp, Uuid } from '../platform/http/schemas.js';

export const NodeHealthReply = Type.Object({
  id: Uuid,
  name: Type.String(),
  hostname: Type.String(),
  pid: Type.Integer(),
  version: Type.String(),
  startedAt: Timestamp,
  lastHeartbeat: Timestamp,
  stoppedAt: Type.Union([Timestamp, Type.Null()]),
  status: Type.Union([Type.Literal('ok'), Type.Literal('faulty'), Type.Literal('stopped')], {
    description:
      '`faulty`: no heartbeat for longer than STELLWERK_NODE_FAULTY_AFTER_MS; `stopped`: shut down.',
  }),
  silentForMs: Type.Integer({ description: 'Milliseconds since the last heartbeat, on the database clock.' }),
});

export const HealthReply = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')], {
    description: '`degraded` when a node is faulty or the database query failed.',
  }),
  checkedAt: Timestamp,
  checkedBy: Type.String({ description: 'Id of the node that answered.' }),
  version: Type.String({ description: 'Stellwerk version of the node that answered (`0.2.0`).' }),
  database: Type.Object({
    status: Type.Union([Type.Literal('ok'), Type.Literal('failed')]),
    latencyMs: Type.Number(),
    message: Type.Optional(Type.String()),
  }),
  nodes: Type.Array(NodeHealthReply),
  openFiles: Type.Union(
    [
      Type.Object({
        soft: Type.Union([Type.Integer(), Type.Null()], {
          description: 'The limit in force; null: unlimited.',
        }),
        hard: Type.Union([Type.Integer(), Type.Null()], {
          description: 'The ceiling (LimitNOFILE= / ulimit -Hn); Node raises the soft limit to it at start.',
        }),
      }),
      Type.Null(),
    ],
    {
      description:
        "The answering node's open-file limit (RLIMIT_NOFILE); null where the platform has none (Windows). MQTT connections are capped below it (STELLWERK_MQTT_RESERVED_FILES).",
    },
  ),
});
