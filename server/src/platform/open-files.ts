import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';

/**
 * The process's open-file limit (RLIMIT_NOFILE). Every socket is a descriptor: MQTT clients, HTTP
 * connections, PostgreSQL pool connections, spool segments, log files all draw from this one limit.
 *
 * Node raises the soft limit to the hard limit itself when it starts (node.cc, PlatformInit, on every
 * POSIX system), so the hard limit is the one that counts: set it with `LimitNOFILE=` in the systemd
 * unit (installers/linux/stellwerk.service) or `ulimit -Hn` before starting. Raising the hard limit
 * needs privileges a running server does not have, so the server only reads and reports it.
 */
export interface OpenFileLimit {
  /** The limit in force; null: unlimited. */
  soft: number | null;
  /** The ceiling the soft limit may be raised to without privileges; null: unlimited. */
  hard: number | null;
}

const parse = (text: string | undefined): number | null | undefined => {
  const value = text?.trim();
  if (value === 'unlimited' || value === 'infinity') return null;
  return value && /^\d+$/.test(value) ? Number(value) : undefined;
};

/** The `Max open files` row of a Linux `/proc/<pid>/limits` text. */
export function parseProcLimits(text: string): OpenFileLimit | undefined {
  const row = text.split('\n').find((line) => line.startsWith('Max open files'));
  const [soft, hard] = row?.slice('Max open files'.length).trim().split(/\s+/) ?? [];
  const limit = { soft: parse(soft), hard: parse(hard) };
  return limit.soft === undefined || limit.hard === undefined ? undefined : (limit as OpenFileLimit);
}

/** Other POSIX systems (macOS): a child shell inherits this process's limits and prints them. */
export function readShellLimits(): Promise<OpenFileLimit | undefined> {
  return new Promise((resolve) => {
    execFile('/bin/sh', ['-c', 'ulimit -Sn; ulimit -Hn'], { timeout: 2000 }, (error, stdout) => {
      const [soft, hard] = error ? [] : stdout.split('\n');
      const limit = { soft: parse(soft), hard: parse(hard) };
      resolve(limit.soft === undefined || limit.hard === undefined ? undefined : (limit as OpenFileLimit));
    });
  });
}

/** This process's open-file limit now; null where the platform has none to read (Windows). */
export async function openFileLimit(): Promise<OpenFileLimit | null> {
  if (process.platform === 'win32') return null;
  const proc = await fs.readFile('/proc/self/limits', 'utf8').catch(() => undefined);
  return (proc === undefined ? undefined : parseProcLimits(proc)) ?? (await readShellLimits()) ?? null;
}
