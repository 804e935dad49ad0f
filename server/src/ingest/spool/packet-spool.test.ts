import { appendFile, mkdtemp, readdir, readFile, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { Metrics } from '../../platform/metrics.js';
import type { IncomingPacket } from '../ingest.types.js';
import { PacketSpool, type PacketSpoolOptions, type SpoolGroup } from './packet-spool.js';
import { decodeRecords, encodeRecord } from './spool-record.js';

const dirs: string[] = [];
const spools: PacketSpool[] = [];

afterEach(async () => {
  await Promise.allSettled(spools.splice(0).map((spool) => spool.stop()));
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'stellwerk-spool-'));
  dirs.push(dir);
  return dir;
}

type SpoolSetup = Partial<PacketSpoolOptions> & { committedSeq?: number };

function spoolOn(dir: string, { committedSeq = 0, ...options }: SpoolSetup = {}): PacketSpool {
  const spool = new PacketSpool({
    dir,
    readCommittedSeq: async () => committedSeq,
    maxOutstanding: 100_000,
    metrics: new Metrics({}, { processMetrics: false }),
    log: pino({ enabled: false }),
    ...options,
  });
  spools.push(spool);
  return spool;
}

async function startedOn(dir: string, setup: SpoolSetup = {}): Promise<PacketSpool> {
  const spool = spoolOn(dir, setup);
  await spool.start();
  return spool;
}

function packet(index: number, payloadBytes = 16): IncomingPacket {
  return {
    connectorId: '0b6f6c1e-3f2a-4c1d-9a57-5c3f0e2b7d11',
    deviceKey: `device-${String(index).padStart(6, '0')}`,
    payload: Buffer.alloc(payloadBytes, index & 0xff),
    source: 'mqtt',
    receivedAt: new Date(1_700_000_000_000 + index),
  };
}

/** Appends one packet per index, each after the previous one is durable (one group each). */
async function appendInTurn(spool: PacketSpool, indexes: number[], payloadBytes = 16): Promise<void> {
  for (const index of indexes) await spool.append(packet(index, payloadBytes));
}

function seqs(groups: SpoolGroup[]): number[] {
  return groups.flatMap((group) => decodeRecords(group.bytes).records.map((record) => record.seq));
}

function deviceKeys(groups: SpoolGroup[]): string[] {
  return groups.flatMap((group) => decodeRecords(group.bytes).records.map((record) => record.deviceKey));
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

async function segmentFirstSeqs(dir: string): Promise<number[]> {
  return (await readdir(dir))
    .filter((name) => name.endsWith('.seg'))
    .map((name) => Number(name.slice(0, 20)));
}

function segmentFile(dir: string, firstSeq: number): string {
  return path.join(dir, `${String(firstSeq).padStart(20, '0')}.seg`);
}

/** Polls until `check` holds, for at most `ms`; the expectation after it reports what is wrong. */
async function eventually(check: () => Promise<boolean>, ms = 2000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline && !(await check())) await new Promise((resolve) => setTimeout(resolve, 10));
}

async function refusal(promise: Promise<void>): Promise<string> {
  return promise.then(
    () => 'accepted',
    (error: { code?: string }) => error.code ?? 'no code',
  );
}

describe('packet spool', () => {
  it('makes 5,000 concurrent appends durable, handed on once each, in seq order', async () => {
    const spool = await startedOn(await tempDir());
    const durable: SpoolGroup[] = [];
    spool.onDurable((group) => durable.push(group));
    await Promise.all(range(1, 5000).map((i) => spool.append(packet(i))));

    expect(seqs(durable)).toEqual(range(1, 5000));
    expect(durable.length).toBeLessThan(100);
    for (const group of durable) {
      expect(seqs([group])).toEqual(range(group.firstSeq, group.lastSeq));
      // Transferable on its own: the group's ArrayBuffer holds exactly its bytes.
      expect([group.bytes.byteOffset, group.bytes.buffer.byteLength]).toEqual([0, group.bytes.byteLength]);
    }
    expect(spool.lastDurableSeq).toBe(5000);
    expect(seqs(spool.readDurable(0))).toEqual(range(1, 5000));
    expect(deviceKeys(spool.readDurable(0))).toEqual(range(1, 5000).map((i) => packet(i).deviceKey));
    expect(seqs(spool.readDurable(2500))).toEqual(range(2501, 5000));
    expect(spool.readDurable(5000)).toEqual([]);
  });

  it('hands groups on after their appends resolved, and survives a throwing listener', async () => {
    const spool = await startedOn(await tempDir());
    let resolved = false;
    const seen: boolean[] = [];
    spool.onDurable(() => {
      throw new Error('listener fault');
    });
    spool.onDurable(() => seen.push(resolved));
    await spool.append(packet(1)).then(() => (resolved = true));
    await spool.append(packet(2));
    expect(seen).toEqual([false, true]);
    expect(seqs(spool.readDurable(0))).toEqual([1, 2]);
  });

  it('shows accepted packets to listeners before they are durable and names the declined ones per group', async () => {
    const spool = await startedOn(await tempDir());
    const accepted: string[] = [];
    const durable: SpoolGroup[] = [];
    let durableSoFar = 0;
    spool.onAccepted((p) => {
      accepted.push(`${p.deviceKey}@${durableSoFar}`);
      // Declines the odd ones; a throwing listener counts as declining.
      if (p.deviceKey.endsWith('3')) throw new Error('listener fault');
      return Number(p.deviceKey.slice(-1)) % 2 === 0;
    });
    spool.onDurable((group) => {
      durable.push(group);
      durableSoFar = group.lastSeq;
    });
    await Promise.all(range(1, 4).map((i) => spool.append(packet(i))));
    // Seen at append, before any of them was durable.
    expect(accepted).toEqual(range(1, 4).map((i) => `${packet(i).deviceKey}@0`));
    expect(durable.flatMap((g) => g.declinedSeqs ?? [])).toEqual([1, 3]);
    expect(seqs(durable)).toEqual([1, 2, 3, 4]);
    // Read back from the files, no group names declined packets (replays are never shown on arrival).
    expect(spool.readDurable(0).every((g) => g.declinedSeqs === undefined)).toBe(true);
  });

  it('refuses a packet whose device key does not fit its length field, and only that one', async () => {
    const spool = await startedOn(await tempDir());
    const tooLong = { ...packet(1), deviceKey: 'x'.repeat(70_000) };
    expect(await refusal(spool.append(tooLong))).toBe('INGEST_INVALID');
    expect(await refusal(spool.append(packet(2)))).toBe('accepted');
  });

  describe('restart', () => {
    it('keeps its identity across restarts and asks for the position under it; another directory has another', async () => {
      const dir = await tempDir();
      const asked: string[] = [];
      const readCommittedSeq = async (spoolId: string) => (asked.push(spoolId), 0);
      const first = await startedOn(dir, { readCommittedSeq });
      const id = first.id;
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      await first.stop();
      const second = await startedOn(dir, { readCommittedSeq });
      expect(second.id).toBe(id);
      const other = await startedOn(await tempDir(), { readCommittedSeq });
      expect(other.id).not.toBe(id);
      expect(asked).toEqual([id, id, other.id]);
    });

    it('returns earlier records and continues above them when nothing was committed', async () => {
      const dir = await tempDir();
      const first = await startedOn(dir);
      await Promise.all(range(1, 19).map((i) => first.append(packet(i))));
      await first.append({ ...packet(20), meta: { fPort: 2, fCnt: 20, topic: 'a/b' } });
      await first.stop();

      const second = await startedOn(dir);
      expect(seqs(second.readDurable(0))).toEqual(range(1, 20));
      const replayed = second.readDurable(0).flatMap((group) => decodeRecords(group.bytes).records);
      expect(replayed.map((r) => r.meta).slice(-2)).toEqual([
        undefined,
        { fPort: 2, fCnt: 20, topic: 'a/b' },
      ]);
      expect(deviceKeys(second.readDurable(0))).toEqual(range(1, 20).map((i) => packet(i).deviceKey));
      await second.append(packet(21));
      expect(second.lastDurableSeq).toBe(21);
      expect(seqs(second.readDurable(19))).toEqual([20, 21]);
    });

    it('deletes segments wholly committed and keeps partly committed ones', async () => {
      const dir = await tempDir();
      const recordBytes = encodeRecord(1, packet(1)).length;
      const first = await startedOn(dir, { segmentBytes: 3 * recordBytes });
      await appendInTurn(first, range(1, 10));
      await first.stop();
      expect((await segmentFirstSeqs(dir)).sort((a, b) => a - b)).toEqual([1, 4, 7, 10]);

      const second = await startedOn(dir, { committedSeq: 5, segmentBytes: 3 * recordBytes });
      expect((await segmentFirstSeqs(dir)).sort((a, b) => a - b)).toEqual([4, 7, 10, 11]);
      expect(seqs(second.readDurable(5))).toEqual(range(6, 10));
      await second.append(packet(11));
      expect(second.lastDurableSeq).toBe(11);
    });

    it('starts above the committed seq when the database is ahead of the files', async () => {
      const dir = await tempDir();
      const first = await startedOn(dir);
      await appendInTurn(first, range(1, 5));
      await first.stop();

      const second = await startedOn(dir, { committedSeq: 1000 });
      expect(await segmentFirstSeqs(dir)).toEqual([1001]);
      expect(second.readDurable(0)).toEqual([]);
      await second.append(packet(6));
      expect(seqs(second.readDurable(0))).toEqual([1001]);
    });

    it('ignores a torn tail, and records past the next segment’s first seq', async () => {
      const dir = await tempDir();
      const first = await startedOn(dir);
      await appendInTurn(first, range(1, 5));
      await first.stop();
      const halfRecord = encodeRecord(6, packet(6)).subarray(0, 30);
      await appendFile(segmentFile(dir, 1), Buffer.concat([halfRecord, Buffer.from('garbage')]));

      const second = await startedOn(dir);
      expect(seqs(second.readDurable(0))).toEqual(range(1, 5));
      await second.append(packet(600));
      await second.stop();
      // A complete record 6 left behind in segment 1 (a refused write that could not be truncated)
      // must lose against segment 6, which took over from seq 6.
      const original = await readFile(segmentFile(dir, 1));
      const validEnd = decodeRecords(original).validEnd;
      await writeFile(
        segmentFile(dir, 1),
        Buffer.concat([original.subarray(0, validEnd), encodeRecord(6, packet(6))]),
      );

      const third = await startedOn(dir);
      expect(seqs(third.readDurable(0))).toEqual(range(1, 6));
      expect(deviceKeys(third.readDurable(5))).toEqual([packet(600).deviceKey]);
    });
  });

  it('rotates small segments and deletes exactly the closed ones a commit covers', async () => {
    const dir = await tempDir();
    const spool = await startedOn(dir, { segmentBytes: 4096 });
    for (let batch = 0; batch < 12; batch += 1) {
      await Promise.all(range(batch * 5 + 1, batch * 5 + 5).map((i) => spool.append(packet(i, 500))));
    }
    const firsts = (await segmentFirstSeqs(dir)).sort((a, b) => a - b);
    expect(firsts.length).toBeGreaterThanOrEqual(5);
    expect(seqs(spool.readDurable(0))).toEqual(range(1, 60));
    const lastOf = (index: number) => firsts[index + 1]! - 1;

    spool.committed(lastOf(1));
    await eventually(async () => (await segmentFirstSeqs(dir)).length === firsts.length - 2);
    expect((await segmentFirstSeqs(dir)).sort((a, b) => a - b)).toEqual(firsts.slice(2));

    spool.committed(lastOf(2) - 1);
    spool.committed(lastOf(0)); // lower than before: ignored
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await segmentFirstSeqs(dir)).sort((a, b) => a - b)).toEqual(firsts.slice(2));
    expect(seqs(spool.readDurable(lastOf(1)))).toEqual(range(lastOf(1) + 1, 60));

    spool.committed(60);
    await eventually(async () => (await segmentFirstSeqs(dir)).length === 1);
    expect(await segmentFirstSeqs(dir)).toEqual([firsts.at(-1)]);
    await spool.append(packet(61, 500));
    expect(seqs(spool.readDurable(60))).toEqual([61]);
  });

  it('refuses INGEST_BUSY beyond maxOutstanding until downstream commits', async () => {
    const spool = await startedOn(await tempDir(), { maxOutstanding: 10 });
    const accepted = range(1, 10).map((i) => spool.append(packet(i)));
    expect(await refusal(spool.append(packet(11)))).toBe('INGEST_BUSY');
    await Promise.all(accepted);
    expect(await refusal(spool.append(packet(11)))).toBe('INGEST_BUSY');
    spool.committed(3);
    await Promise.all(range(11, 13).map((i) => spool.append(packet(i))));
    expect(await refusal(spool.append(packet(14)))).toBe('INGEST_BUSY');
    expect(spool.lastDurableSeq).toBe(13);
  });

  it('stop lets queued appends finish and refuses later ones', async () => {
    const dir = await tempDir();
    const spool = await startedOn(dir);
    const queued = range(1, 100).map((i) => spool.append(packet(i)));
    const stopped = spool.stop();
    expect(await refusal(spool.append(packet(101)))).toBe('INGEST_STOPPED');
    await Promise.all(queued);
    await stopped;
    expect(existsSync(path.join(dir, 'LOCK'))).toBe(false);
    expect(spool.lastDurableSeq).toBe(100);
  });

  describe('LOCK', () => {
    it('refuses a second spool on a directory in use, naming it and the pid', async () => {
      const dir = await tempDir();
      const first = await startedOn(dir);
      const second = spoolOn(dir).start();
      await expect(second).rejects.toThrow(`${dir} is in use by process ${process.pid}`);
      // A start-up error main.ts prints as one line naming the setting (docs/operations.md).
      await expect(second).rejects.toMatchObject({ name: 'StartupError', message: /^STELLWERK_SPOOL_DIR: / });
      await first.append(packet(1));
      expect(await readFile(path.join(dir, 'LOCK'), 'utf8')).toBe(`${process.pid}\n`);
    });

    it('takes over a stale LOCK: a pid not alive, or this pid held by no spool here', async () => {
      const deadPid = 2 ** 22 + 12345;
      expect(() => process.kill(deadPid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
      for (const stalePid of [deadPid, process.pid]) {
        const dir = await tempDir();
        await writeFile(path.join(dir, 'LOCK'), `${stalePid}\n`);
        const spool = await startedOn(dir);
        expect(await readFile(path.join(dir, 'LOCK'), 'utf8')).toBe(`${process.pid}\n`);
        await spool.stop();
        expect(existsSync(path.join(dir, 'LOCK'))).toBe(false);
      }
    });
  });

  // A real write failure without hooks: the next segment's name is a symlink to /dev/full, whose
  // writes fail with ENOSPC and whose ftruncate fails with EINVAL.
  it.skipIf(!existsSync('/dev/full'))('refuses a group whose write fails and never hands it on', async () => {
    const dir = await tempDir();
    const metrics = new Metrics({}, { processMetrics: false });
    const spool = await startedOn(dir, { segmentBytes: 1, metrics });
    const durable: SpoolGroup[] = [];
    spool.onDurable((group) => durable.push(group));
    await symlink('/dev/full', segmentFile(dir, 2));
    await spool.append(packet(1)); // rotates into segment 2, i.e. /dev/full

    const failed = spool.append(packet(2));
    await expect(failed).rejects.toMatchObject({ code: 'INGEST_STORE_FAILED', message: /ENOSPC/ });
    await unlink(segmentFile(dir, 2));
    // The spool may still hold /dev/full for one more group: it reopens the segment after that fails.
    let accepted: number | undefined;
    for (let index = 3; index <= 5 && accepted === undefined; index += 1) {
      if ((await refusal(spool.append(packet(index)))) === 'accepted') accepted = index;
    }
    expect(accepted).toBeDefined();
    expect(seqs(durable)).toEqual([1, 2]);
    expect(deviceKeys(spool.readDurable(0))).toEqual([packet(1).deviceKey, packet(accepted!).deviceKey]);
    expect(await metrics.registry.getSingleMetricAsString('stellwerk_packet_spool_refused_total')).toMatch(
      new RegExp(`reason="store-failed"} ${accepted! - 2}`),
    );
    await spool.stop();

    const restarted = await startedOn(dir);
    expect(seqs(restarted.readDurable(0))).toEqual([1, 2]);
    expect(deviceKeys(restarted.readDurable(1))).toEqual([packet(accepted!).deviceKey]);
  });
});

describe('packet spool in cluster mode (acknowledged after the commit)', () => {
  it('resolves an append only once downstream committed it to the packet table', async () => {
    const spool = await startedOn(await tempDir(), { acknowledgeAfterCommit: true });
    const groups: SpoolGroup[] = [];
    spool.onDurable((group) => groups.push(group));
    let acknowledged = false;
    const appended = spool.append(packet(1)).then(() => (acknowledged = true));
    await expect.poll(() => groups.length).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(acknowledged, 'durable on disk is not enough').toBe(false);
    spool.committed(groups[0]!.lastSeq);
    await appended;
    expect(acknowledged).toBe(true);
  });

  it('drops records the table lacks at a start, since their senders were never acknowledged', async () => {
    const dir = await tempDir();
    const first = await startedOn(dir, { acknowledgeAfterCommit: true });
    void first.append(packet(1));
    void first.append(packet(2));
    await expect.poll(() => first.lastDurableSeq).toBe(2);
    await first.stop();
    const again = await startedOn(dir, { acknowledgeAfterCommit: true, committedSeq: 1 });
    expect(again.readDurable(1)).toEqual([]);
    expect(again.backlog).toBe(0);
    const groups: SpoolGroup[] = [];
    again.onDurable((group) => groups.push(group));
    void again.append(packet(3));
    await expect.poll(() => groups.length).toBe(1);
    expect(groups[0]!.firstSeq, 'a dropped seq is never used again').toBe(3);
  });
});
