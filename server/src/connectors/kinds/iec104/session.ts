import type net from 'node:net';
import { DeliveryError } from '../../../outgoing/delivery.js';
import { LinkError, type LinkContext, type LinkSession } from '../../links/link.types.js';
import {
  acknowledged,
  decodeApdu,
  encodeI,
  encodeS,
  encodeU,
  FrameReader,
  Iec104FrameError,
  SEQ_MODULO,
  type Apdu,
} from './apci.js';
import {
  C_CS_NA_1,
  C_DC_NA_1,
  C_IC_NA_1,
  C_SC_NA_1,
  commandElement,
  COT,
  decodeAsdu,
  encodeCommand,
  encodeCp56,
  type Asdu,
} from './asdu.js';
import { Iec104Values } from './values.js';
import type { Iec104Settings } from './settings.js';
import type { Point } from './points.js';

const TICK_MS = 100;
/** Causes of transmission 44..47 in a mirrored command: what the outstation did not know. */
const UNKNOWN_CAUSES: Record<number, string> = {
  44: 'unknown type identification',
  45: 'unknown cause of transmission',
  46: 'unknown common address',
  47: 'unknown information object address',
};

interface Waiter {
  typeId: number;
  ca: number;
  ioa: number;
  handle(asdu: Asdu & { kind: 'command' }): void;
}

/**
 * One open IEC 104 connection as the controlling station: the link procedure (STARTDT, TESTFR,
 * k/w windows, t1/t2/t3), I-frames processed one after the other and acknowledged only once their
 * values are stored, general interrogation and clock synchronisation after STARTDT con, single and
 * double commands with select-before-operate.
 */
export class Iec104Session implements LinkSession {
  readonly closed: Promise<string>;
  private resolveClosed!: (reason: string) => void;
  private ended = false;
  private readonly reader = new FrameReader();
  /** V(S): our next send number; the oldest of ours not yet acknowledged, and when each was sent. */
  private vs = 0;
  private oldestUnacked = 0;
  private readonly sentAt: number[] = [];
  private readonly waiting: Buffer[] = [];
  /** V(R): the next send number expected from the outstation; `stored`: frames whose values are stored. */
  private vr = 0;
  private stored = 0;
  private lastAckSent = 0;
  private unackedSince: number | undefined;
  private lastReceivedAt = Date.now();
  private testSentAt: number | undefined;
  private lastInterrogationAt = 0;
  private started: (() => void) | undefined;
  private chain: Promise<void> = Promise.resolve();
  private commands: Promise<unknown> = Promise.resolve();
  private waiter: Waiter | undefined;
  private readonly ticker: NodeJS.Timeout;
  private readonly values: Iec104Values;

  private constructor(
    private readonly socket: net.Socket,
    private readonly ctx: LinkContext,
    private readonly s: Iec104Settings,
  ) {
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
    this.values = new Iec104Values(ctx, s);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => this.drop('the outstation closed the connection'));
    this.ticker = setInterval(() => this.tick(), TICK_MS);
  }

  /** Connects (within t0), sends STARTDT act and resolves on STARTDT con (within t1). */
  static async open(ctx: LinkContext, s: Iec104Settings): Promise<Iec104Session> {
    const socket = await connect(ctx, s);
    const session = new Iec104Session(socket, ctx, s);
    const confirmed = new Promise<boolean>((resolve) => {
      session.started = () => resolve(true);
      const timer = setTimeout(() => resolve(false), s.t1 * 1000);
      void session.closed.then(() => (clearTimeout(timer), resolve(false)));
    });
    session.write(encodeU('STARTDT_ACT'));
    if (!(await confirmed)) {
      await session.close();
      throw new LinkError(`The outstation did not confirm STARTDT within t1 (${s.t1} s)`);
    }
    session.started = undefined;
    if (s.clockSync) session.sendClockSync();
    session.interrogate();
    return session;
  }

  async close(): Promise<void> {
    if (this.ended) return;
    // What was stored is acknowledged before the connection ends, so the outstation does not send it again.
    if (this.pendingAcks() > 0) this.sendS();
    this.drop('closed', true);
  }

  /** A single or double command; with select-before-operate, select and execute each confirmed. */
  command(point: Point, on: boolean, select: boolean): Promise<void> {
    const run = this.commands.then(() => this.runCommand(point, on, select));
    this.commands = run.catch(() => undefined);
    return run;
  }

  private async runCommand(point: Point, on: boolean, select: boolean): Promise<void> {
    const family = point.type === 'double-command' ? 'double' : 'single';
    const typeId = family === 'double' ? C_DC_NA_1 : C_SC_NA_1;
    if (select) await this.exchange(typeId, point, commandElement(family, on, true), 'select');
    await this.exchange(typeId, point, commandElement(family, on, false), 'execute');
  }

  /** Sends one command and waits for its ACTCON (select) or ACTCON and ACTTERM (execute), each within t1. */
  private exchange(typeId: number, point: Point, element: Buffer, step: 'select' | 'execute'): Promise<void> {
    if (this.ended) return Promise.reject(new DeliveryError('The IEC 104 link is down', true));
    return new Promise<void>((resolve, reject) => {
      let confirmed = false;
      let done = false;
      const finish = (error?: Error) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        this.waiter = undefined;
        if (error) reject(error);
        else resolve();
      };
      const expire = () => {
        // An outstation that sends no ACTTERM after a positive ACTCON has executed the command.
        if (confirmed) return finish();
        finish(new DeliveryError(`No confirmation of the ${step} within t1 (${this.s.t1} s)`, false));
      };
      let timer = setTimeout(expire, this.s.t1 * 1000);
      void this.closed.then(() => finish(new DeliveryError(`The link was lost during the ${step}`, false)));
      this.waiter = {
        typeId,
        ca: point.ca,
        ioa: point.ioa,
        handle: (asdu) => {
          const unknown = UNKNOWN_CAUSES[asdu.cot];
          if (unknown)
            return finish(new DeliveryError(`The outstation refused the ${step}: ${unknown}`, false));
          if (asdu.cot === COT.activationCon && asdu.negative)
            return finish(
              new DeliveryError(`The outstation refused the ${step} (negative confirmation)`, false),
            );
          if (asdu.cot === COT.activationCon) {
            if (step === 'select') return finish();
            confirmed = true;
            clearTimeout(timer);
            timer = setTimeout(expire, this.s.t1 * 1000);
          }
          if (asdu.cot === COT.activationTerm) finish();
        },
      };
      this.sendI(
        encodeCommand({
          typeId,
          cot: COT.activation,
          originator: this.s.originator,
          ca: point.ca,
          ioa: point.ioa,
          element,
        }),
      );
    });
  }

  private interrogate(): void {
    this.lastInterrogationAt = Date.now();
    const element = Buffer.from([20]); // QOI 20: station interrogation
    this.sendI(
      encodeCommand({
        typeId: C_IC_NA_1,
        cot: COT.activation,
        originator: this.s.originator,
        ca: this.s.commonAddress,
        ioa: 0,
        element,
      }),
    );
  }

  private sendClockSync(): void {
    const element = encodeCp56(new Date());
    this.sendI(
      encodeCommand({
        typeId: C_CS_NA_1,
        cot: COT.activation,
        originator: this.s.originator,
        ca: this.s.commonAddress,
        ioa: 0,
        element,
      }),
    );
  }

  private onData(chunk: Buffer): void {
    if (this.ended) return;
    this.lastReceivedAt = Date.now();
    let apdus: Apdu[];
    try {
      apdus = this.reader.push(chunk).map(decodeApdu);
    } catch (error) {
      if (!(error instanceof Iec104FrameError)) throw error;
      this.ctx.log('error', `Malformed IEC 104 frame: ${error.message}; closing the connection`);
      return this.drop(`malformed frame (${error.message})`);
    }
    for (const apdu of apdus) {
      if (this.ended) return;
      this.onApdu(apdu);
    }
  }

  private onApdu(apdu: Apdu): void {
    if (apdu.format === 'U') {
      if (apdu.fn === 'STARTDT_CON') this.started?.();
      else if (apdu.fn === 'TESTFR_ACT') this.write(encodeU('TESTFR_CON'));
      else if (apdu.fn === 'TESTFR_CON') this.testSentAt = undefined;
      else if (apdu.fn === 'STOPDT_ACT') this.drop('the outstation stopped data transfer (STOPDT)');
      return;
    }
    if (!this.onAck(apdu.recv)) return;
    if (apdu.format === 'S') return;
    if (apdu.send !== this.vr)
      return this.protocolError(`I-frame with send sequence number ${apdu.send}, expected ${this.vr}`);
    this.vr = (this.vr + 1) % SEQ_MODULO;
    const asdu = apdu.asdu;
    this.chain = this.chain
      .then(() => this.onAsdu(asdu))
      .then(
        () => this.storedOne(),
        () =>
          this.drop(
            'the packet store cannot take values now; unacknowledged frames are left to the outstation',
          ),
      );
  }

  private async onAsdu(bytes: Buffer): Promise<void> {
    if (this.ended) throw new Error('closed');
    let asdu: Asdu;
    try {
      asdu = decodeAsdu(bytes);
    } catch (error) {
      if (!(error instanceof Iec104FrameError)) throw error;
      // The frame itself was well formed: it is acknowledged and skipped, the link stays.
      return this.values.malformed(error.message);
    }
    if (asdu.kind === 'monitoring') return this.values.store(asdu);
    if (asdu.kind === 'unknown') return this.values.unknownType(asdu.typeId);
    const w = this.waiter;
    if (w && w.typeId === asdu.typeId && w.ca === asdu.ca && w.ioa === asdu.ioa) return w.handle(asdu);
    if (
      (asdu.typeId === C_IC_NA_1 || asdu.typeId === C_CS_NA_1) &&
      (asdu.negative || UNKNOWN_CAUSES[asdu.cot])
    )
      this.ctx.log(
        'warn',
        `The outstation refused ${asdu.typeId === C_IC_NA_1 ? 'general interrogation' : 'clock synchronisation'} (cause ${asdu.cot})`,
      );
  }

  private storedOne(): void {
    this.stored = (this.stored + 1) % SEQ_MODULO;
    this.unackedSince ??= Date.now();
    if (this.pendingAcks() >= this.s.w) this.sendS();
  }

  /** Applies the outstation's acknowledgement of our I-frames; false when the link was dropped for it. */
  private onAck(recv: number): boolean {
    const count = acknowledged(recv, this.oldestUnacked, this.vs);
    if (count === undefined) {
      this.protocolError(`acknowledgement of sequence number ${recv}, which was never sent`);
      return false;
    }
    this.sentAt.splice(0, count);
    this.oldestUnacked = recv;
    while (this.waiting.length > 0 && this.sentAt.length < this.s.k) this.sendI(this.waiting.shift()!);
    return true;
  }

  private sendI(asdu: Buffer): void {
    if (this.sentAt.length >= this.s.k) return void this.waiting.push(asdu);
    this.write(encodeI(this.vs, this.stored, asdu));
    this.sentAt.push(Date.now());
    this.vs = (this.vs + 1) % SEQ_MODULO;
    this.acked();
  }

  private sendS(): void {
    this.write(encodeS(this.stored));
    this.acked();
  }

  private acked(): void {
    this.lastAckSent = this.stored;
    this.unackedSince = undefined;
  }

  private pendingAcks(): number {
    return (this.stored - this.lastAckSent + SEQ_MODULO) % SEQ_MODULO;
  }

  private tick(): void {
    const now = Date.now();
    if (this.sentAt.length > 0 && now - this.sentAt[0]! > this.s.t1 * 1000)
      return this.drop(`no acknowledgement of an I-frame within t1 (${this.s.t1} s)`);
    if (this.testSentAt !== undefined && now - this.testSentAt > this.s.t1 * 1000)
      return this.drop(`no TESTFR confirmation within t1 (${this.s.t1} s)`);
    if (this.unackedSince !== undefined && now - this.unackedSince >= this.s.t2 * 1000) this.sendS();
    if (this.testSentAt === undefined && now - this.lastReceivedAt >= this.s.t3 * 1000) {
      this.testSentAt = now;
      this.write(encodeU('TESTFR_ACT'));
    }
    const every = this.s.interrogationIntervalSeconds * 1000;
    if (every > 0 && this.started === undefined && now - this.lastInterrogationAt >= every)
      this.interrogate();
  }

  private protocolError(message: string): void {
    this.ctx.log('error', `IEC 104 protocol error: ${message}; closing the connection`);
    this.drop(`protocol error (${message})`);
  }

  private write(frame: Buffer): void {
    if (!this.ended) this.socket.write(frame);
  }

  /** Ends the session once; `graceful` lets written frames go out before the socket closes. */
  private drop(reason: string, graceful = false): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.ticker);
    if (graceful) {
      this.socket.end();
      setTimeout(() => this.socket.destroy(), 1000).unref();
    } else this.socket.destroy();
    this.resolveClosed(reason);
  }
}

/** A TCP connection to the outstation through the outgoing-target guard, within t0. */
function connect(ctx: LinkContext, s: Iec104Settings): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = ctx.dial.socket({ host: s.host, port: s.port }, () => {
      clearTimeout(timer);
      socket.off('error', fail);
      resolve(socket);
    });
    const fail = (error: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(error);
    };
    const timer = setTimeout(() => fail(new Error(`no connection within t0 (${s.t0} s)`)), s.t0 * 1000);
    socket.once('error', fail);
    socket.setNoDelay(true);
  });
}
