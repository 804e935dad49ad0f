import {
  AttributeIds,
  BrowseDirection,
  ClientMonitoredItemGroup,
  DataType,
  NodeClass,
  NodeId,
  TimestampsToReturn,
  type ClientSession,
  type ClientSubscription,
  type DataValue,
  type OPCUAClient,
} from 'node-opcua';
import type { LinkContext, LinkSession } from '../links/link.types.js';
import {
  checkWriteValue,
  int64,
  samplePacket,
  type NodeMapping,
  type Sample,
  type WriteCommand,
} from './opcua-values.js';

/** One child of a node, for the console's node picker. */
export interface BrowsedNode {
  nodeId: string;
  browseName: string;
  displayName: string;
  nodeClass: string;
  /** Variables only: the built-in type's name (`Double`) or the data type's node id. */
  dataType: string | null;
}

export const MAX_BROWSE_REFERENCES = 1000;
const CLOSE_TIMEOUT_MS = 5000;

/** The built-in type's name for a data type node id of namespace 0 (`i=11` → `Double`), else the id. */
function dataTypeName(value: unknown): string | null {
  if (!(value instanceof NodeId)) return null;
  const id = value.value;
  if (value.namespace === 0 && typeof id === 'number' && id >= 1 && id <= 25)
    return DataType[id] ?? value.toString();
  return value.toString();
}

/**
 * An open OPC UA connection of a connector: client, session and subscription. Values of the
 * mapped nodes become packets; `browse` and `write` serve the node picker and downlinks.
 */
export class OpcuaSession implements LinkSession {
  readonly closed: Promise<string>;
  private lose!: (reason: string) => void;
  /** Packets are stored one after the other, in the order the server notified them. */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly client: OPCUAClient,
    private readonly session: ClientSession,
    private readonly ctx: LinkContext,
    /** What was stored last per node id, across reconnects: a value sent again is not stored twice. */
    private readonly delivered: Map<string, string>,
  ) {
    this.closed = new Promise((resolve) => (this.lose = resolve));
    client.on('connection_lost', () => this.lose('the connection to the server was lost'));
    client.on('close', () => this.lose('the server closed the connection'));
    client.on('backoff', () => this.lose('the connection to the server was lost'));
    session.on('session_closed', () => this.lose('the server closed the session'));
    session.on('keepalive_failure', () => this.lose('the session stopped answering'));
  }

  /** Subscribes to the mapped nodes; nodes the server refuses are logged and left out. */
  async subscribe(nodes: readonly NodeMapping[], publishingMs: number, samplingMs: number): Promise<void> {
    const subscription: ClientSubscription = await this.session.createSubscription2({
      requestedPublishingInterval: publishingMs,
      requestedLifetimeCount: 60,
      requestedMaxKeepAliveCount: 10,
      maxNotificationsPerPublish: 1000,
      publishingEnabled: true,
      priority: 10,
    });
    subscription.on('terminated', () => this.lose('the server ended the subscription'));
    if (nodes.length === 0) return;
    const group = ClientMonitoredItemGroup.create(
      subscription,
      nodes.map((n) => ({ nodeId: n.nodeId, attributeId: AttributeIds.Value })),
      { samplingInterval: samplingMs, discardOldest: true, queueSize: 10 },
      TimestampsToReturn.Both,
    );
    group.on('changed', (_item, dataValue, index) => {
      const mapping = nodes[index];
      if (mapping) this.deliver(mapping, dataValue);
    });
    await new Promise<void>((resolve, reject) => {
      group.once('initialized', () => resolve());
      group.once('err', (message: string) => reject(new Error(message)));
    });
    const refused = group.monitoredItems
      .map((item, i) => ({ nodeId: nodes[i]?.nodeId, status: item.statusCode }))
      .filter((r) => r.status.isNotGood());
    if (refused.length > 0)
      this.ctx.log('warn', `The server refused to monitor ${refused.length} of ${nodes.length} nodes`, {
        nodes: refused.slice(0, 20).map((r) => `${r.nodeId}: ${r.status.name}`),
      });
  }

  private deliver(mapping: NodeMapping, dataValue: DataValue): void {
    const variant = dataValue.value;
    const value =
      variant.dataType === DataType.Int64 || variant.dataType === DataType.UInt64
        ? int64(variant.value, variant.dataType === DataType.Int64)
        : (variant.value as unknown);
    const sample: Sample = {
      value,
      status: dataValue.statusCode.name,
      sourceTimestamp: dataValue.sourceTimestamp,
    };
    const item = samplePacket(mapping, sample);
    // A reconnect (or a restarted server keeping its values) notifies every item again: the same
    // sample, by its source timestamp, is not stored again. Without a timestamp nothing can tell.
    const key = sample.sourceTimestamp
      ? `${item.meta?.fields?.sourceTimestamp}|${sample.status}|${item.payload.toString()}`
      : undefined;
    this.queue = this.queue.then(async () => {
      if (key !== undefined && this.delivered.get(mapping.nodeId) === key) return;
      try {
        await this.ctx.packet(item);
        if (key !== undefined) this.delivered.set(mapping.nodeId, key);
      } catch {
        // No acknowledgement exists in OPC UA to hold back: the value is lost, and said so.
        this.ctx.log('warn', `A value of ${mapping.nodeId} could not be stored now and is lost`, {
          deviceId: mapping.deviceId,
        });
      }
    });
  }

  /** The children of `nodeId` (objects, variables, methods) along hierarchical references. */
  async browse(nodeId: string): Promise<BrowsedNode[]> {
    this.session.requestedMaxReferencesPerNode = MAX_BROWSE_REFERENCES;
    const result = await this.session.browse({
      nodeId,
      browseDirection: BrowseDirection.Forward,
      referenceTypeId: 'HierarchicalReferences',
      includeSubtypes: true,
      nodeClassMask: 0,
      resultMask: 63,
    });
    if (result.statusCode.isNotGood())
      throw new Error(`The server could not browse ${nodeId}: ${result.statusCode.name}`);
    const references = (result.references ?? []).slice(0, MAX_BROWSE_REFERENCES);
    const variables = references.filter((r) => Number(r.nodeClass) === Number(NodeClass.Variable));
    const types = variables.length
      ? await this.session.read(
          variables.map((r) => ({ nodeId: r.nodeId, attributeId: AttributeIds.DataType })),
        )
      : [];
    const typeOf = new Map(variables.map((r, i) => [r, dataTypeName(types[i]?.value.value)]));
    return references.map((r) => ({
      nodeId: r.nodeId.toString(),
      browseName: r.browseName.toString(),
      displayName: r.displayName.text ?? '',
      nodeClass: NodeClass[r.nodeClass] ?? String(r.nodeClass),
      dataType: typeOf.get(r) ?? null,
    }));
  }

  /** Writes a node's value; resolves with the server's status code name (`Good`, `BadNotWritable`, …). */
  async write(command: WriteCommand): Promise<string> {
    let dataType = command.dataType;
    if (!dataType) {
      const read = await this.session.read({ nodeId: command.nodeId, attributeId: AttributeIds.DataType });
      if (read.statusCode.isNotGood()) return read.statusCode.name;
      dataType = checkWriteValue(dataTypeName(read.value.value) ?? 'unknown', command.value);
    }
    const value = dataType === 'DateTime' ? new Date(command.value as string) : command.value;
    const status = await this.session.write({
      nodeId: command.nodeId,
      attributeId: AttributeIds.Value,
      value: { value: { dataType: DataType[dataType], value } },
    });
    return status.name;
  }

  async close(): Promise<void> {
    this.lose('closed');
    const done = (async () => {
      await this.session.close().catch(() => undefined);
      await this.client.disconnect().catch(() => undefined);
    })();
    await Promise.race([done, new Promise((r) => setTimeout(r, CLOSE_TIMEOUT_MS).unref())]);
  }
}
