import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './mosquitto.js';

/** A real Debian `victoria-metrics` (single node) on 127.0.0.1 with its storage in a temp dir. */
export interface VictoriaMetrics {
  port: number;
  url: string;
  dir: string;
  /** Makes recently written samples searchable now (VictoriaMetrics buffers them for about a second). */
  flush(): Promise<void>;
  stop(): Promise<void>;
}

export async function startVictoriaMetrics(): Promise<VictoriaMetrics> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'stellwerk-victoria-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    'victoria-metrics',
    [
      `-storageDataPath=${path.join(dir, 'data')}`,
      `-httpListenAddr=127.0.0.1:${port}`,
      // Keeps test points of any age, and one sample per series and millisecond (idempotent rewrites).
      '-retentionPeriod=100y',
      '-dedup.minScrapeInterval=1ms',
      '-loggerLevel=ERROR',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`victoria-metrics exited: ${output}`);
    const ok = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) })
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`victoria-metrics did not answer on ${url}: ${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    port,
    url,
    dir,
    flush: async () => {
      await fetch(`${url}/internal/force_flush`);
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
