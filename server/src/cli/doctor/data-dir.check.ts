import fs from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../../config.js';
import type { DoctorCheck, DoctorFinding } from '../doctor-check.js';

/**
 * The data directory: a directory this user can write (probed with a real file, so read-only
 * mounts, a file in its place and missing permissions all show), who owns it, and no world-writable
 * bits; the secret key readable by its owner only. Then the free disk there against the spool limit.
 */

/** Below this the database and the spool stop accepting writes soon, whatever the spool limit. */
export const MIN_FREE_BYTES = 256 * 1024 * 1024;

const CHECK = 'data-dir';

function reasonOf(code: string | undefined): string {
  switch (code) {
    case 'ENOTDIR':
    case 'EEXIST':
      return 'a part of that path is a file, not a folder';
    case 'EACCES':
    case 'EPERM':
      return 'this user may not write there';
    case 'EROFS':
      return 'the file system is read-only';
    case 'ENOSPC':
      return 'the disk is full';
    default:
      return code ?? 'unknown error';
  }
}

/** The directory itself, or the nearest existing ancestor when it is yet to be created. */
async function nearestExisting(dir: string): Promise<string> {
  let current = dir;
  for (;;) {
    try {
      await fs.stat(current);
      return current;
    } catch {
      const parent = path.dirname(current);
      if (parent === current) return current;
      current = parent;
    }
  }
}

async function probeWrite(dir: string): Promise<string | undefined> {
  const probe = path.join(dir, `.doctor-write-test-${process.pid}`);
  try {
    await fs.writeFile(probe, 'ok');
    await fs.rm(probe);
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? String(error);
  }
}

async function directoryFindings(dir: string): Promise<DoctorFinding[]> {
  const stat = await fs.stat(dir).catch((error: NodeJS.ErrnoException) => error);
  if (stat instanceof Error) {
    if (stat.code !== 'ENOENT') {
      return [
        {
          check: CHECK,
          status: 'fail',
          message: `STELLWERK_DATA_DIR "${dir}" cannot be used (${reasonOf(stat.code)})`,
          details: { dir, code: stat.code },
        },
      ];
    }
    const parent = await nearestExisting(path.dirname(dir));
    const failure = await probeWrite(parent);
    return failure
      ? [
          {
            check: CHECK,
            status: 'fail',
            message: `STELLWERK_DATA_DIR "${dir}" does not exist and cannot be created in ${parent} (${reasonOf(failure)})`,
            details: { dir, code: failure },
          },
        ]
      : [
          {
            check: CHECK,
            status: 'warn',
            message: `STELLWERK_DATA_DIR "${dir}" does not exist yet; the server creates it at start`,
            details: { dir },
          },
        ];
  }
  if (!stat.isDirectory()) {
    return [
      {
        check: CHECK,
        status: 'fail',
        message: `STELLWERK_DATA_DIR "${dir}" is a file, not a folder`,
        details: { dir },
      },
    ];
  }
  const details = {
    dir,
    ownerUid: stat.uid,
    ownerGid: stat.gid,
    mode: (stat.mode & 0o7777).toString(8),
    processUid: process.getuid?.(),
  };
  const failure = await probeWrite(dir);
  if (failure) {
    return [
      {
        check: CHECK,
        status: 'fail',
        message: `STELLWERK_DATA_DIR "${dir}" cannot be written (${reasonOf(failure)}); run as the user that owns it (uid ${stat.uid}) or fix its permissions`,
        details: { ...details, code: failure },
      },
    ];
  }
  const findings: DoctorFinding[] = [];
  if (stat.mode & 0o002) {
    findings.push({
      check: CHECK,
      status: 'warn',
      message: `STELLWERK_DATA_DIR "${dir}" is writable by every user (mode ${details.mode}); run chmod o-w on it`,
      details,
    });
  }
  const uid = process.getuid?.();
  if (uid !== undefined && uid !== 0 && uid !== stat.uid) {
    findings.push({
      check: CHECK,
      status: 'warn',
      message: `STELLWERK_DATA_DIR "${dir}" is owned by uid ${stat.uid}, not by this user (uid ${uid}); the server should run as its owner`,
      details,
    });
  }
  const key = await fs.stat(path.join(dir, 'secret.key')).catch(() => undefined);
  if (key && key.mode & 0o077) {
    findings.push({
      check: CHECK,
      status: 'warn',
      message: `secret.key in "${dir}" is readable by other users (mode ${(key.mode & 0o777).toString(8)}); run chmod 600 on it`,
      details,
    });
  }
  if (!findings.length) {
    findings.push({
      check: CHECK,
      status: 'ok',
      message: `STELLWERK_DATA_DIR "${dir}" is writable, owned by uid ${stat.uid}, mode ${details.mode}`,
      details,
    });
  }
  return findings;
}

/** The most packet bytes the spool holds before it refuses new packets (each at the MQTT size limit). */
export function spoolLimitBytes(config: Config): number {
  return config.ingestMaxPending * config.mqttMaxPacketBytes;
}

async function diskFinding(config: Config): Promise<DoctorFinding> {
  const where = await nearestExisting(config.spoolDir);
  const stats = await fs.statfs(where);
  const free = stats.bavail * stats.bsize;
  const limit = spoolLimitBytes(config);
  const details = { path: where, freeBytes: free, spoolLimitBytes: limit, minFreeBytes: MIN_FREE_BYTES };
  const figures = `${gib(free)} free at ${where}; a full spool (STELLWERK_INGEST_MAX_PENDING × STELLWERK_MQTT_MAX_PACKET_BYTES) takes up to ${gib(limit)}`;
  if (free < MIN_FREE_BYTES)
    return {
      check: 'disk',
      status: 'fail',
      message: `${figures}; less than ${gib(MIN_FREE_BYTES)} free: free space now`,
      details,
    };
  if (free < limit)
    return {
      check: 'disk',
      status: 'warn',
      message: `${figures}; a long database outage could fill the disk`,
      details,
    };
  return { check: 'disk', status: 'ok', message: figures, details };
}

function gib(bytes: number): string {
  return `${(bytes / 1024 ** 3).toFixed(bytes < 1024 ** 3 ? 2 : 1)} GiB`;
}

export const dataDirCheck: DoctorCheck = {
  name: CHECK,
  async run(config) {
    const findings = await directoryFindings(config.dataDir);
    findings.push(await diskFinding(config));
    return findings;
  },
};
