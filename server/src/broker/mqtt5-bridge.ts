import { randomUUID } from 'node:crypto';
import { Duplex } from 'node:stream';
import mqttPacket, { type Packet } from 'mqtt-packet';

/**
 * MQTT 5 for Aedes, which speaks 3.1 and 3.1.1 only (its CONNECT handler refuses level 5).
 *
 * The bridge sits between an MQTT 5 client connection and `aedes.handle()`: packets from the client are
 * decoded as MQTT 5 and re-encoded as 3.1.1 without their properties; Aedes' replies are decoded as
 * 3.1.1 and re-encoded as MQTT 5 with reason codes (CONNACK return codes, SUBACK 0x80 → 0x87,
 * UNSUBACK success per filter). What MQTT 5 adds that 3.1.1 cannot carry is either answered here
 * (assigned client identifier, maximum packet size, negative PUBACKs set through `refuse()`, CONNACK
 * reason codes set through `refuseConnect()`) or refused
 * (topic aliases, which the CONNACK does not grant; AUTH exchanges). 3.1.1 clients never pass through
 * here: the cost is paid by MQTT 5 connections only.
 */

/** MQTT 5 reason codes the broker uses. */
export const ReasonCode = {
  unspecifiedError: 0x80,
  notAuthorized: 0x87,
  serverBusy: 0x89,
  topicNameInvalid: 0x90,
  packetTooLarge: 0x95,
  quotaExceeded: 0x97,
  payloadFormatInvalid: 0x99,
} as const;

// CONNACK return code (3.1.1) → reason code (5).
const CONNACK_REASON: Record<number, number> = { 0: 0, 1: 0x84, 2: 0x85, 3: 0x88, 4: 0x86, 5: 0x87 };

export interface BridgeOptions {
  /** Announced to the client in CONNACK (Maximum Packet Size). */
  maxPacketBytes: number;
}

export class Mqtt5Bridge extends Duplex {
  private readonly fromClient = mqttPacket.parser({ protocolVersion: 5 });
  private readonly fromBroker = mqttPacket.parser({ protocolVersion: 4 });
  private assignedClientId: string | undefined;
  /** Unsubscribe message id → number of filters, for the UNSUBACK reason code list. */
  private readonly unsubscribes = new Map<number, number>();
  /** Publish message id → reason code of its negative PUBACK. */
  private readonly refusals = new Map<number, number>();
  /** The reason code of a refused CONNECT when 3.1.1 has no return code for it (quota exceeded). */
  private connectRefusal: number | undefined;
  /** Set while a write to the client socket hit its buffer limit: Aedes then waits for drain. */
  private clientFull = false;

  constructor(
    private readonly socket: Duplex,
    private readonly options: BridgeOptions,
  ) {
    super({ allowHalfOpen: false });
    this.fromClient.on('packet', (packet: Packet) => this.clientPacket(packet));
    this.fromClient.on('error', (error: Error) => this.destroy(error));
    this.fromBroker.on('packet', (packet: Packet) => this.brokerPacket(packet));
    this.fromBroker.on('error', (error: Error) => this.destroy(error));
    socket.on('data', (chunk: Buffer) => {
      this.fromClient.parse(chunk);
    });
    socket.on('end', () => this.push(null));
    socket.on('error', (error) => this.destroy(error));
    socket.on('close', () => this.destroy());
  }

  /** Answers the PUBACK for `messageId` with `reasonCode` instead of success. */
  refuse(messageId: number, reasonCode: number): void {
    this.refusals.set(messageId, reasonCode);
  }

  /** Answers a refused CONNECT with `reasonCode` instead of the one mapped from Aedes' return code. */
  refuseConnect(reasonCode: number): void {
    this.connectRefusal = reasonCode;
  }

  override _read(): void {
    this.socket.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.clientFull = false;
    this.fromBroker.parse(chunk);
    if (this.clientFull && !this.socket.destroyed) this.socket.once('drain', () => callback());
    else callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.socket.destroy();
    callback(error);
  }

  private toBroker(packet: Packet): void {
    if (!this.push(mqttPacket.generate(packet, { protocolVersion: 4 }))) this.socket.pause();
  }

  private toClient(packet: Packet): void {
    if (this.socket.destroyed) return;
    if (!this.socket.write(mqttPacket.generate(packet, { protocolVersion: 5 }))) this.clientFull = true;
  }

  private clientPacket(packet: Packet): void {
    switch (packet.cmd) {
      case 'connect': {
        let clientId = packet.clientId;
        // MQTT 5 lets the server name a client that sent no id, whatever its clean-start flag.
        if (!clientId) clientId = this.assignedClientId = `mqtt5-${randomUUID()}`;
        return this.toBroker({
          cmd: 'connect',
          protocolId: 'MQTT',
          protocolVersion: 4,
          clientId,
          clean: packet.clean ?? true,
          keepalive: packet.keepalive ?? 0,
          ...(packet.username !== undefined ? { username: packet.username } : {}),
          ...(packet.password !== undefined ? { password: packet.password } : {}),
          ...(packet.will
            ? {
                will: {
                  topic: packet.will.topic,
                  payload: packet.will.payload,
                  qos: packet.will.qos ?? 0,
                  retain: packet.will.retain ?? false,
                },
              }
            : {}),
        });
      }
      case 'publish':
        // Topic aliases were not granted (no Topic Alias Maximum in CONNACK): a protocol error.
        if (packet.properties?.topicAlias !== undefined) return void this.destroy();
        return this.toBroker({
          cmd: 'publish',
          topic: packet.topic,
          payload: packet.payload,
          qos: packet.qos,
          dup: packet.dup,
          retain: packet.retain,
          ...(packet.qos > 0 ? { messageId: packet.messageId! } : {}),
        });
      case 'puback':
      case 'pubrec':
      case 'pubrel':
      case 'pubcomp':
        return this.toBroker({ cmd: packet.cmd, messageId: packet.messageId! });
      case 'subscribe':
        return this.toBroker({
          cmd: 'subscribe',
          messageId: packet.messageId!,
          subscriptions: packet.subscriptions.map((s) => ({ topic: s.topic, qos: s.qos })),
        });
      case 'unsubscribe':
        this.unsubscribes.set(packet.messageId!, packet.unsubscriptions.length);
        return this.toBroker({
          cmd: 'unsubscribe',
          messageId: packet.messageId!,
          unsubscriptions: packet.unsubscriptions,
        });
      case 'pingreq':
        return this.toBroker({ cmd: 'pingreq' });
      case 'disconnect':
        // 0x04 "disconnect with will message": end without DISCONNECT so Aedes publishes the will.
        if (packet.reasonCode === 0x04) return void this.destroy();
        return this.toBroker({ cmd: 'disconnect' });
      default:
        // AUTH (enhanced authentication) and server-only packets from a client.
        this.destroy();
    }
  }

  private brokerPacket(packet: Packet): void {
    switch (packet.cmd) {
      case 'connack': {
        const mapped = CONNACK_REASON[packet.returnCode ?? 0] ?? ReasonCode.unspecifiedError;
        const reasonCode = mapped !== 0 && this.connectRefusal !== undefined ? this.connectRefusal : mapped;
        return this.toClient({
          cmd: 'connack',
          reasonCode,
          sessionPresent: packet.sessionPresent,
          ...(reasonCode === 0
            ? {
                properties: {
                  maximumPacketSize: this.options.maxPacketBytes,
                  retainAvailable: false,
                  wildcardSubscriptionAvailable: true,
                  sharedSubscriptionAvailable: false,
                  subscriptionIdentifiersAvailable: false,
                  ...(this.assignedClientId ? { assignedClientIdentifier: this.assignedClientId } : {}),
                },
              }
            : {}),
        });
      }
      case 'puback': {
        const reasonCode = this.refusals.get(packet.messageId!);
        if (reasonCode !== undefined) this.refusals.delete(packet.messageId!);
        return this.toClient({ cmd: 'puback', messageId: packet.messageId!, reasonCode: reasonCode ?? 0 });
      }
      case 'suback':
        return this.toClient({
          cmd: 'suback',
          messageId: packet.messageId!,
          granted: (packet.granted as number[]).map((g) => (g >= 0x80 ? ReasonCode.notAuthorized : g)),
        });
      case 'unsuback': {
        const count = this.unsubscribes.get(packet.messageId!) ?? 1;
        this.unsubscribes.delete(packet.messageId!);
        return this.toClient({
          cmd: 'unsuback',
          messageId: packet.messageId!,
          granted: new Array<number>(count).fill(0),
        });
      }
      case 'publish':
        return this.toClient({
          cmd: 'publish',
          topic: packet.topic,
          payload: packet.payload,
          qos: packet.qos,
          dup: packet.dup,
          retain: packet.retain,
          ...(packet.qos > 0 ? { messageId: packet.messageId! } : {}),
        });
      default:
        // pubrec, pubrel, pubcomp, pingresp carry nothing version-specific.
        return this.toClient(packet);
    }
  }
}
