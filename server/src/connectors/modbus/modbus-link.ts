import type net from 'node:net';
import jsmodbus from 'jsmodbus';
import type { Connector } from '../connector.entity.js';
import type { LinkContext, LinkDriver, LinkSession } from '../links/link.types.js';
import { sleep } from '../links/link-runtime.js';
import { ModbusDecodeError, exceptionName } from './modbus-codec.js';
import type { WriteCommand } from './modbus-command.js';
import {
  DEFAULT_POLL_MS,
  DEFAULT_PORT,
  DEFAULT_TIMEOUT_MS,
  decodeGroup,
  entriesOf,
  groupReads,
  type EntryValue,
  type ModbusConfig,
  type ReadGroup,
  type RegisterEntry,
  widthOf,
} from './modbus-map.js';

type TcpClient = InstanceType<typeof jsmodbus.client.TCP>;

/** A Modbus exception answer (the request reached the device, which refused it). */
export class ModbusExceptionError extends Error {
  constructor(
    readonly code: number,
    what: string,
  ) {
    super(`${what}: the device answered "${exceptionName(code)}" (exception ${code})`);
    this.name = 'ModbusExceptionError';
  }
}

/** The link is lost (timeout, closed socket, a peer out of step); the runtime reconnects. */
export class ModbusLinkLost extends Error {}

export interface ModbusSession extends LinkSession {
  /** The entries of the connector's register map (defaults filled in). */
  readonly entries: readonly RegisterEntry[];
  write(command: WriteCommand): Promise<void>;
}

export const modbusTarget = (connector: Connector): string => {
  const config = connector.config as unknown as ModbusConfig;
  return `modbus://${config.host}:${config.port ?? DEFAULT_PORT}`;
};

/**
 * The values stored last per connector, for `report: "change"`: kept across reconnects, so a link
 * that comes back does not store unchanged values again. Reset when the settings change.
 */
const reported = new Map<string, { settings: string; values: Map<string, number | boolean> }>();

export function modbusDriver(): LinkDriver<ModbusSession> {
  return {
    target: modbusTarget,
    async open(ctx) {
      const config = ctx.connector.config as unknown as ModbusConfig;
      const entries = entriesOf(config);
      const timeoutMs = config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      const socket = ctx.dial.socket({ host: config.host, port: config.port ?? DEFAULT_PORT });
      // jsmodbus learns that the socket is online from its 'connect' event: create clients first.
      const clients = new Map<number, TcpClient>();
      const units = new Set(entries.map((e) => e.unitId));
      // Each unit's client listens to the socket ('data', 'connect', 'close'): a map of many units is no leak.
      socket.setMaxListeners(units.size * 3 + 10);
      for (const unit of units) clients.set(unit, new jsmodbus.client.TCP(socket, unit, timeoutMs));
      await connected(socket, timeoutMs);
      socket.setNoDelay(true);
      const settings = JSON.stringify(config);
      let memory = reported.get(ctx.connector.id);
      if (memory?.settings !== settings) {
        memory = { settings, values: new Map() };
        reported.set(ctx.connector.id, memory);
      }
      const session = new Session(ctx, config, entries, socket, clients, memory.values);
      session.run();
      return session;
    },
  };
}

function connected(socket: net.Socket, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error('connect timed out')), timeoutMs);
    const fail = (error: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(error);
    };
    socket.once('error', fail);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.off('error', fail);
      resolve();
    });
  });
}

class Session implements ModbusSession {
  readonly closed: Promise<string>;
  private drop!: (reason: string) => void;
  private readonly stop = new AbortController();
  /** One request at a time on the link: polls and writes take turns. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Groups that failed with an exception are read entry by entry for the rest of the session. */
  private groups: ReadGroup[];
  /** Problems already logged in this session: a problem that repeats every poll is logged once. */
  private readonly logged = new Set<string>();

  constructor(
    private readonly ctx: LinkContext,
    private readonly config: ModbusConfig,
    readonly entries: readonly RegisterEntry[],
    private readonly socket: net.Socket,
    private readonly clients: Map<number, TcpClient>,
    private readonly last: Map<string, number | boolean>,
  ) {
    this.groups = groupReads(entries);
    const stopped = () => this.drop('stopped');
    this.closed = new Promise((resolve) => {
      this.drop = (reason) => {
        // The connector's signal outlives this session (reconnects): do not pile up listeners on it.
        ctx.signal.removeEventListener('abort', stopped);
        this.stop.abort();
        socket.destroy();
        resolve(reason);
      };
    });
    socket.on('error', () => this.drop('the connection failed'));
    socket.on('close', () => this.drop('the peer closed the connection'));
    ctx.signal.addEventListener('abort', stopped, { once: true });
  }

  async close(): Promise<void> {
    // Stopped for good (deactivated, deleted, new settings): the next start stores every value afresh.
    if (this.ctx.signal.aborted) reported.delete(this.ctx.connector.id);
    this.drop('stopped');
    await this.queue.catch(() => undefined);
  }

  run(): void {
    void (async () => {
      const interval = this.config.pollIntervalMs ?? DEFAULT_POLL_MS;
      while (!this.stop.signal.aborted) {
        const started = Date.now();
        try {
          await this.poll();
        } catch (error) {
          if (error instanceof ModbusLinkLost) return this.drop(error.message);
          this.ctx.serverLog.error({ err: error, connectorId: this.ctx.connector.id }, 'modbus poll failed');
          return this.drop('the poll failed');
        }
        await sleep(Math.max(0, interval - (Date.now() - started)), this.stop.signal);
      }
    })();
  }

  write(command: WriteCommand): Promise<void> {
    const { entry } = command;
    return this.turn(
      async (client) => {
        if (command.kind === 'coil') await client.writeSingleCoil(entry.address, command.value);
        else if (command.registers.length === 2)
          await client.writeSingleRegister(entry.address, command.registers.readUInt16BE(0));
        else await client.writeMultipleRegisters(entry.address, command.registers);
      },
      entry.unitId,
      `Writing ${entry.table} ${entry.address} on unit ${entry.unitId}`,
    );
  }

  /** Runs one request after the ones before it; exceptions and lost links come back as errors. */
  private turn<T>(request: (client: TcpClient) => Promise<T>, unitId: number, what: string): Promise<T> {
    const next = this.queue.then(async () => {
      if (this.stop.signal.aborted) throw new ModbusLinkLost('the link is closed');
      const client = this.clients.get(unitId);
      if (!client) throw new ModbusDecodeError(`Unit ${unitId} is not in the register map`);
      try {
        return await request(client);
      } catch (error) {
        const failure = error as { err?: string; response?: { body?: { code?: unknown } } };
        const code = failure.response?.body?.code;
        if (failure.err === 'ModbusException' && typeof code === 'number')
          throw new ModbusExceptionError(code, what);
        const reason =
          failure.err === 'Timeout'
            ? `no answer within ${this.config.timeoutMs ?? DEFAULT_TIMEOUT_MS} ms`
            : 'the connection failed';
        this.drop(reason);
        throw new ModbusLinkLost(reason);
      }
    });
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async poll(): Promise<void> {
    const values = new Map<string, Record<string, number | boolean>>();
    const fields = new Map<string, Record<string, string | number>>();
    for (const group of [...this.groups]) {
      for (const { entry, ...result } of await this.read(group)) {
        if ('error' in result) {
          this.once('warn', `${entry.deviceId}/${entry.state}: ${result.error}; skipped`, entry);
          continue;
        }
        const key = `${entry.deviceId}\u0000${entry.state}`;
        if (this.config.report === 'change' && this.last.get(key) === result.value) continue;
        values.set(entry.deviceId, { ...values.get(entry.deviceId), [entry.state]: result.value });
        fields.set(entry.deviceId, {
          ...fields.get(entry.deviceId),
          [`${entry.state}.table`]: entry.table,
          [`${entry.state}.address`]: entry.address,
          [`${entry.state}.unitId`]: entry.unitId,
        });
      }
    }
    for (const [deviceId, states] of values) {
      try {
        await this.ctx.packet({
          deviceKey: deviceId,
          payload: Buffer.from(JSON.stringify(states)),
          meta: { fields: fields.get(deviceId)! },
        });
      } catch {
        continue; // the store cannot take it now: the next poll reads and offers it again
      }
      for (const [state, value] of Object.entries(states)) this.last.set(`${deviceId}\u0000${state}`, value);
    }
  }

  /** One group's values; an exception skips the group's entries (and splits a group of several). */
  private async read(group: ReadGroup): Promise<EntryValue[]> {
    const what = `Reading ${group.table} ${group.address}${group.count > 1 ? `-${group.address + group.count - 1}` : ''} on unit ${group.unitId}`;
    try {
      const data = await this.turn(
        async (client) => {
          const answer = await readOf(client, group);
          return answer.response.body.valuesAsBuffer;
        },
        group.unitId,
        what,
      );
      return decodeGroup(group, data);
    } catch (error) {
      if (error instanceof ModbusDecodeError) {
        // Out of step with the peer: what arrives next cannot be trusted to answer what was asked.
        this.ctx.log('error', `${what}: malformed answer, ${error.message}`, { unitId: group.unitId });
        throw new ModbusLinkLost('malformed answer');
      }
      if (!(error instanceof ModbusExceptionError)) throw error;
      if (group.entries.length > 1) {
        this.groups = this.groups.flatMap((g) => (g === group ? splitOf(g) : [g]));
        return (await Promise.all(splitOf(group).map((g) => this.read(g)))).flat();
      }
      this.once(
        'warn',
        `${error.message}; ${group.entries[0]!.deviceId}/${group.entries[0]!.state} skipped`,
        group.entries[0]!,
        {
          exception: error.code,
        },
      );
      return [];
    }
  }

  private once(level: 'warn', message: string, entry: RegisterEntry, details: Record<string, unknown> = {}) {
    if (this.logged.has(message)) return;
    this.logged.add(message);
    this.ctx.log(level, message, {
      deviceId: entry.deviceId,
      state: entry.state,
      unitId: entry.unitId,
      table: entry.table,
      address: entry.address,
      ...details,
    });
  }
}

/** A group of one read per entry. */
const splitOf = (group: ReadGroup): ReadGroup[] =>
  group.entries.map((entry) => ({
    unitId: entry.unitId,
    table: entry.table,
    address: entry.address,
    count: widthOf(entry),
    entries: [entry],
  }));

function readOf(client: TcpClient, group: ReadGroup) {
  switch (group.table) {
    case 'holding':
      return client.readHoldingRegisters(group.address, group.count);
    case 'input':
      return client.readInputRegisters(group.address, group.count);
    case 'coil':
      return client.readCoils(group.address, group.count);
    case 'discrete':
      return client.readDiscreteInputs(group.address, group.count);
  }
}
