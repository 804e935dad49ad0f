import mqtt from 'mqtt';

/**
 * The flooding tenant of `npm run bench:connection-flood` (bench/connection-flood.ts), in its own
 * process: on "go" it opens `attempts` MQTT connections in waves (up to its tenant's cap, the rest
 * refused), keeps the accepted ones open, then tries `retryRate` new connections per second (all
 * refused) until "stop". Reports counts over IPC.
 */

export interface FloodJob {
  url: string;
  username: string;
  password: string;
  attempts: number;
  retryRate: number;
}

export interface FloodReport {
  connected: number;
  refused: number;
  /** Anything but a CONNACK refusal (resets, timeouts): the broker closing sockets instead of answering. */
  failed: number;
  /** Why the failed ones failed, by message. */
  failures: Record<string, number>;
  rampMs: number;
  retries: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function attempt(
  job: FloodJob,
  clientId: string,
  failures: Record<string, number>,
): Promise<'connected' | 'refused' | 'failed'> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (result: 'connected' | 'refused' | 'failed', why?: string) => {
      if (settled) return;
      settled = true;
      if (why) failures[why] = (failures[why] ?? 0) + 1;
      resolve(result);
    };
    const client = mqtt.connect(job.url, {
      clientId,
      username: job.username,
      password: job.password,
      reconnectPeriod: 0,
      connectTimeout: 30_000,
    });
    open.push(client);
    client.once('connect', () => settle('connected'));
    client.once('error', (error: Error & { code?: number | string }) => {
      client.end(true);
      // CONNACK return code 3 (server unavailable): the tenant's limit.
      if (error.code === 3) settle('refused');
      else settle('failed', error.message);
    });
    client.once('close', () => settle('failed', 'closed before CONNACK'));
  });
}

const open: mqtt.MqttClient[] = [];

async function run(job: FloodJob): Promise<void> {
  process.send?.({ ready: true });
  await new Promise<void>((resolve) => process.once('message', () => resolve()));
  const report: FloodReport = { connected: 0, refused: 0, failed: 0, failures: {}, rampMs: 0, retries: 0 };
  const count = (result: 'connected' | 'refused' | 'failed') => {
    report[result]++;
  };
  const began = performance.now();
  const ramp: Array<Promise<void>> = [];
  for (let i = 0; i < job.attempts; i++) {
    ramp.push(attempt(job, `flood-${i}`, report.failures).then(count));
    // Waves of 100: a thousand CONNECTs at once measure the TCP backlog, not the broker.
    if (i % 100 === 99) await sleep(50);
  }
  await Promise.all(ramp);
  report.rampMs = Math.round(performance.now() - began);
  process.send?.({ ramped: true, ...report });

  let stopping = false;
  process.once('message', () => (stopping = true));
  const retries: Array<Promise<void>> = [];
  while (!stopping) {
    retries.push(attempt(job, `flood-retry-${report.retries++}`, report.failures).then(count));
    await sleep(1000 / job.retryRate);
  }
  await Promise.all(retries);
  for (const client of open) client.end(true);
  await new Promise<void>((resolve) => process.send!({ done: true, ...report }, () => resolve()));
}

run(JSON.parse(process.argv[2] ?? '{}') as FloodJob).then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
