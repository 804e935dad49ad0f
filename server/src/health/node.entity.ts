import { EntitySchema } from '@mikro-orm/core';

/** One row per server process; its heartbeat says whether it is alive. */
export class ServerNode {
  id!: string;
  name!: string;
  hostname!: string;
  pid!: number;
  version!: string;
  startedAt: Date = new Date();
  lastHeartbeat: Date = new Date();
  stoppedAt: Date | null = null;
  details: Record<string, unknown> = {};
}

export const ServerNodeSchema = new EntitySchema<ServerNode>({
  class: ServerNode,
  tableName: 'server_nodes',
  properties: {
    id: { type: 'uuid', primary: true },
    name: { type: 'string', length: 200 },
    hostname: { type: 'string', length: 200 },
    pid: { type: 'integer' },
    version: { type: 'string', length: 40 },
    startedAt: { type: 'datetime', columnType: 'timestamptz' },
    lastHeartbeat: { type: 'datetime', columnType: 'timestamptz' },
    stoppedAt: { type: 'datetime', columnType: 'timestamptz', nullable: true },
    details: { type: 'json' },
  },
});
