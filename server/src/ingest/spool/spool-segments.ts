import type { FastifyBaseLogger } from 'fastify';
import { deleteSegments, readSegmentGroups, type SegmentFile, type SpoolGroup } from './spool-files.js';
import { openSegmentFile, type OpenSegment } from './spool-writes.js';

/**
 * The packet spool's segment files (packet-spool.ts): the one groups are appended to, the closed
 * ones that still hold records downstream has not committed, rotation, and deletion once committed.
 *
 * - A closed segment is deleted only after downstream committed its last record, and leaves the
 *   list before its file is touched, so `readDurable` never reads a file being deleted.
 * - After a failed write the open segment is cut back to its durable end; if that fails, it is
 *   closed and a new segment named by the next seq takes over (a restart reads no segment past the
 *   next one's first seq, so the refused bytes stay ignored).
 */
export class SpoolSegments {
  private current: OpenSegment | undefined;
  /** No longer appended to, in seq order, until downstream committed them. */
  private closed: SegmentFile[] = [];
  private deleting: Promise<void> = Promise.resolve();

  constructor(
    private readonly dir: string,
    private readonly segmentBytes: number,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** Bytes of the segment files that hold durable records: what the spool occupies on disk. */
  get durableBytes(): number {
    let total = this.current?.segment.durableBytes ?? 0;
    for (const segment of this.closed) total += segment.durableBytes;
    return total;
  }

  /**
   * At start: opens the segment for `nextSeq` on, keeps the found segments that hold records above
   * `committedSeq` and deletes the others. A found segment named like the new one held no record
   * (see openSegmentFile) and is replaced by it.
   */
  async adopt(found: SegmentFile[], nextSeq: number, committedSeq: number): Promise<void> {
    const opened = await this.open(nextSeq);
    const others = found.filter((segment) => segment.path !== opened.segment.path);
    this.closed = others.filter((segment) => segment.lastSeq > committedSeq);
    await deleteSegments(
      this.dir,
      others.filter((segment) => segment.lastSeq <= committedSeq),
      this.log,
    );
  }

  /** The segment the next group is written to; opened, named by `firstSeq`, when there is none. */
  async target(firstSeq: number): Promise<OpenSegment> {
    return this.current ?? this.open(firstSeq);
  }

  /**
   * Every durable record with seq > afterSeq, in seq order, in groups of at most about `maxBytes`.
   * Synchronous, so no group can become durable while it reads.
   */
  readDurable(afterSeq: number, maxBytes: number): SpoolGroup[] {
    const segments = this.current ? [...this.closed, this.current.segment] : this.closed;
    return segments.flatMap((segment) => readSegmentGroups(segment, afterSeq, maxBytes));
  }

  /** A group of `bytes` up to `lastSeq` is durable in `target`. */
  written(target: OpenSegment, bytes: number, lastSeq: number): void {
    target.segment.durableBytes += bytes;
    target.segment.lastSeq = lastSeq;
  }

  /** Once the open segment reached its size: closes it and opens the next one, from `nextSeq`. */
  async rotateIfFull(nextSeq: number, committedSeq: number): Promise<void> {
    if (this.current && this.current.segment.durableBytes >= this.segmentBytes)
      await this.rotate(nextSeq, committedSeq);
  }

  /** After a failed group: cut the segment back to its durable end, or continue in a new segment. */
  async discardUndurableBytes(target: OpenSegment, nextSeq: number): Promise<void> {
    try {
      await target.handle.truncate(target.segment.durableBytes);
      await target.handle.datasync();
      return;
    } catch (error) {
      this.log.error(
        { err: error, file: target.segment.path },
        'packet spool: could not truncate a failed write; continuing in a new segment',
      );
    }
    this.current = undefined;
    await target.handle.close().catch(() => undefined);
    // An empty segment is replaced by the new one of the same name; one with records stays until committed.
    if (target.segment.lastSeq >= target.segment.firstSeq) this.closed.push(target.segment);
    await this.openNext(nextSeq);
  }

  /** Downstream committed every record up to `committedSeq`: closed segments it covers are deleted. */
  deleteCommitted(committedSeq: number): void {
    let count = 0;
    while (count < this.closed.length && this.closed[count]!.lastSeq <= committedSeq) count += 1;
    if (count === 0) return;
    // Out of the list at once, so readDurable never reads a file being deleted.
    const committed = this.closed.splice(0, count);
    this.deleting = this.deleting.then(() => deleteSegments(this.dir, committed, this.log));
  }

  /** Closes the open segment (start failed, or the spool stops) and waits for pending deletions. */
  async close(): Promise<void> {
    const current = this.current;
    this.current = undefined;
    await current?.handle
      .close()
      .catch((error: unknown) => this.log.error({ err: error }, 'packet spool: closing failed'));
    await this.deleting;
  }

  private async rotate(nextSeq: number, committedSeq: number): Promise<void> {
    const full = this.current!;
    this.current = undefined;
    this.closed.push(full.segment);
    // Downstream may have committed its records already, before it was closed.
    this.deleteCommitted(committedSeq);
    await full.handle
      .close()
      .catch((error: unknown) =>
        this.log.error({ err: error, file: full.segment.path }, 'packet spool: close failed'),
      );
    await this.openNext(nextSeq);
  }

  /** A new segment after a closed one; if that fails, the next group's `target` tries again. */
  private async openNext(nextSeq: number): Promise<void> {
    await this.open(nextSeq).catch((error: unknown) =>
      this.log.error({ err: error }, 'packet spool: could not open a new segment; the next group retries'),
    );
  }

  private async open(firstSeq: number): Promise<OpenSegment> {
    this.current = await openSegmentFile(this.dir, firstSeq);
    return this.current;
  }
}
