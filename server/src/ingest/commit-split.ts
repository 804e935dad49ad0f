import type { FastifyBaseLogger } from 'fastify';
import { safeErrorMessage } from '../platform/db/database-errors.js';
import { FencedError } from './commit-batch.stage.js';
import type { PacketOutcome } from './parse-packet.stage.js';

/**
 * The pipeline's commit policy around one batch transaction (commit-batch.stage.ts): the database
 * unavailable → the same batch again after a pause; the database refusing the data → the batch
 * split in halves until the offending packet is alone, which is then committed as `failed` with
 * the error (and skipped, logged, if even that is refused). A fenced batch (cluster mode) is
 * thrown as it is.
 */
export interface SplitCommit {
  /** One transaction for these outcomes; what it returns runs after the commit. */
  commit(outcomes: PacketOutcome[]): Promise<(() => void) | undefined>;
  /** Waits before retry `attempt`; throws once the pipeline stopped. */
  pause(attempt: number): Promise<void>;
  /** Throws when the pipeline stopped. */
  checkStopped(): void;
  log: FastifyBaseLogger;
}

/** Commits `outcomes` as described above; returns those committed, in order. */
export async function commitSplitting(
  ctx: SplitCommit,
  outcomes: PacketOutcome[],
  afterCommit: Array<() => void>,
): Promise<PacketOutcome[]> {
  for (let attempt = 0; ; attempt++) {
    try {
      const done = await ctx.commit(outcomes);
      if (done) afterCommit.push(done);
      return outcomes;
    } catch (error) {
      if (error instanceof FencedError) throw error;
      ctx.checkStopped();
      if (isTransient(error)) {
        ctx.log.warn({ err: error, attempt }, 'ingest pipeline: commit failed, retrying');
        await ctx.pause(attempt);
        continue;
      }
      if (outcomes.length > 1) {
        const half = Math.ceil(outcomes.length / 2);
        const first = await commitSplitting(ctx, outcomes.slice(0, half), afterCommit);
        const second = await commitSplitting(ctx, outcomes.slice(half), afterCommit);
        return [...first, ...second];
      }
      const [only] = outcomes;
      if (only!.status === 'failed') {
        // Even the bare status could not be written: logged, left unmarked (status null) and not retried.
        ctx.log.error(
          { err: error, packetId: only!.packet.id.toString() },
          'ingest pipeline: packet skipped',
        );
        return [];
      }
      outcomes = [{ ...only!, status: 'failed', error: describeError(error), updates: [] }];
    }
  }
}

/** SQLSTATE classes that name the data, not the database's availability: retrying cannot help. */
const DATA_ERROR = /^(21|22|23|2F|42|54)/;

function isTransient(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return !(typeof code === 'string' && code.length === 5 && DATA_ERROR.test(code));
}

// Shown in the device's packet history: a database error is described without its statement.
const describeError = (error: unknown): string => safeErrorMessage(error).replaceAll('\0', '').slice(0, 1000);
