import { PacketRefusedError } from '../ingest.types.js';

interface Waiting {
  lastSeq: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

/**
 * Cluster mode's acknowledgements (ADR 0130): durable spool groups whose appends resolve only once
 * downstream committed them to `packets`. Once downstream stopped (the node shuts down), waiting and
 * later groups are refused: their senders were not acknowledged and send them again.
 */
export class CommitWaiters {
  private waiting: Waiting[] = [];
  private stopped = false;

  /** Downstream will commit nothing more: appends are refused from now on. */
  get downstreamStopped(): boolean {
    return this.stopped;
  }

  /** A durable group of `lastSeq`, not yet committed downstream. */
  hold(group: Waiting): void {
    if (this.stopped) group.reject(stoppedError());
    else this.waiting.push(group);
  }

  /** Downstream committed every record up to `seq`. */
  committed(seq: number): void {
    let settled = 0;
    while (settled < this.waiting.length && this.waiting[settled]!.lastSeq <= seq) settled += 1;
    for (const group of this.waiting.splice(0, settled)) group.resolve();
  }

  refuseAll(): void {
    this.stopped = true;
    const error = stoppedError();
    for (const group of this.waiting.splice(0)) group.reject(error);
  }
}

const stoppedError = () => new PacketRefusedError('INGEST_STOPPED', 'The server is stopping; send again');
