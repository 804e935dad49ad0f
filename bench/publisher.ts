import mqtt from 'mqtt';
import { RawMqttClient, topicField } from './raw-mqtt.js';

/**
 * One publisher process of the ingest benchmark (bench/ingest.ts starts several). Connects
 * `clients` MQTT clients, each publishing `perClient` JSON messages at QoS 0 or 1, either paced
 * (`rate` messages per second per client) or as fast as a window of unacknowledged messages allows.
 * Prints one JSON line: counts, timings and the publish → PUBACK latencies (ms) of QoS 1.
 */

export interface PublisherJob {
  url: string;
  username?: string;
  password?: string;
  /** `{device}` is replaced by the device key. */
  topic: string;
  devicePrefix: string;
  clients: number;
  perClient: number;
  /** Messages per second per client; 0 = as fast as the window allows. */
  rate: number;
  window: number;
  qos: 0 | 1;
  /**
   * `telemetry` (default): `{seq, t, temperature, humidity, ok}`, one changing value besides `t`.
   * `fleet`: `{a, b, c}`, three values that all change in every message; `a` is the publish time.
   */
  shape?: 'telemetry' | 'fleet';
  /**
   * Paced clients start at evenly spread offsets within one interval, as a fleet's devices do, instead
   * of all at once (which sends every client's message in the same millisecond, interval after interval).
   */
  stagger?: boolean;
}

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Tells the bench every client is connected, then waits for its signal to fire. */
function readyThenGo(): Promise<void> {
  process.send?.({ ready: true });
  return new Promise<void>((resolve) => process.once('message', () => resolve()));
}

const pacedFleet = (job: PublisherJob) =>
  Boolean(job.stagger && job.shape === 'fleet' && job.rate > 0 && job.qos === 1);

async function run(job: PublisherJob): Promise<void> {
  if (pacedFleet(job)) return runFleet(job);
  const clients: mqtt.MqttClient[] = [];
  for (let c = 0; c < job.clients; c++) {
    clients.push(
      mqtt.connect(job.url, {
        clientId: `${job.devicePrefix}-${c}-${process.pid}`,
        ...(job.username ? { username: job.username, password: job.password } : {}),
        reconnectPeriod: 1000,
        connectTimeout: 30_000,
      }),
    );
    // Connect in waves: a thousand CONNECTs at once measure the TCP backlog, not the broker.
    if (c % 100 === 99) await sleep(50);
  }
  await Promise.all(
    clients.map((c) => (c.connected ? Promise.resolve() : new Promise((r) => c.once('connect', r)))),
  );
  await readyThenGo();

  const latencies: number[] = [];
  // How far behind its schedule a paced client fell, worst per tenth: it then sends the overdue messages at once.
  const lateness = Array.from({ length: 10 }, () => 0);
  let acked = 0;
  const progress = process.env.BENCH_DEBUG
    ? setInterval(() => console.error(`  publisher ${process.pid}: acked ${acked}`), 2000).unref()
    : undefined;
  const startedAt = now();
  await Promise.all(
    clients.map(async (client, c) => {
      const device = `${job.devicePrefix}-${c}`;
      const topic = job.topic.replace('{device}', device);
      let inFlight = 0;
      const began = now() + (job.stagger && job.rate > 0 ? (c / job.clients) * (1000 / job.rate) : 0);
      for (let i = 0; i < job.perClient; i++) {
        if (job.rate > 0) {
          const due = began + (i * 1000) / job.rate;
          const wait = due - now();
          if (wait > 1) await sleep(wait);
          const tenth = Math.floor((10 * i) / job.perClient);
          lateness[tenth] = Math.max(lateness[tenth]!, -wait);
        }
        while (job.qos === 1 && inFlight >= job.window) await sleep(1);
        const t = now();
        const payload =
          job.shape === 'fleet'
            ? `{"a":${t},"b":${i},"c":${(i % 1000) / 10}}`
            : JSON.stringify({ seq: i, t, temperature: 20 + (i % 10), humidity: 40.5, ok: true });
        if (job.qos === 0) {
          client.publish(topic, payload, { qos: 0 });
          // Yield now and then: QoS 0 writes would otherwise pile up in the socket buffer.
          if (i % 200 === 199) await sleep(0);
        } else {
          inFlight++;
          client.publish(topic, payload, { qos: 1 }, (error) => {
            inFlight--;
            if (error) return;
            acked++;
            latencies.push(now() - t);
          });
        }
      }
      while (inFlight > 0) await sleep(5);
    }),
  );
  const finishedAt = now();
  clearInterval(progress);
  if (process.env.BENCH_DEBUG && job.rate > 0)
    console.error(
      `  publisher ${process.pid}: worst lateness per tenth (ms) ${lateness.map((l) => l.toFixed(0)).join(' ')}`,
    );
  await Promise.all(clients.map((c) => c.endAsync()));
  await report(job, { acked, startedAt, finishedAt, latencies });
}

/** Hands the result to the bench; IPC is asynchronous, so this waits until it is handed over. */
function report(
  job: PublisherJob,
  r: { acked: number; startedAt: number; finishedAt: number; latencies: number[] },
): Promise<void> {
  return new Promise<void>((resolve) =>
    process.send!(
      {
        done: true,
        sent: job.clients * job.perClient,
        ...r,
        // This process's own CPU (user + system), so the bench can tell the load generator's share.
        cpuMs: (process.cpuUsage().user + process.cpuUsage().system) / 1000,
      },
      () => resolve(),
    ),
  );
}

/**
 * The fleet shape: paced QoS 1 clients on the raw client (raw-mqtt.ts), all of a process's clients on
 * one 1 ms ticker that sends every message that is due, so hundreds of clients keep their schedule
 * without a timer per message (with one per client and message the publishers, not the broker, set
 * the PUBACK tail). Client `c` starts at its offset within the first interval.
 */
async function runFleet(job: PublisherJob): Promise<void> {
  const url = new URL(job.url);
  const keepalive = 60;
  const clients: RawMqttClient[] = [];
  for (let c = 0; c < job.clients; c++) {
    const client = new RawMqttClient({
      host: url.hostname,
      port: Number(url.port),
      clientId: `${job.devicePrefix}-${c}-${process.pid}`,
      ...(job.username ? { username: job.username, password: job.password } : {}),
      keepalive,
    });
    clients.push(client);
    await client.connect();
    // Connect in waves: a thousand CONNECTs at once measure the TCP backlog, not the broker.
    if (c % 100 === 99) await sleep(50);
  }
  const pings = setInterval(() => clients.forEach((c) => c.ping()), (keepalive * 1000) / 2);
  await readyThenGo();

  const latencies: number[] = [];
  let acked = 0;
  const startedAt = now();
  const interval = 1000 / job.rate;
  const topics = clients.map((_, c) => topicField(job.topic.replace('{device}', `${job.devicePrefix}-${c}`)));
  const due = clients.map((_, c) => startedAt + (c / clients.length) * interval);
  const sent = clients.map(() => 0);
  let pending = clients.length * job.perClient;
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const t = now();
      for (let c = 0; c < clients.length; c++) {
        const client = clients[c]!;
        while (sent[c]! < job.perClient && due[c]! <= t && client.inFlight < job.window) {
          const i = sent[c]!++;
          due[c]! += interval;
          const at = now();
          client.publish(topics[c]!, `{"a":${at},"b":${i},"c":${(i % 1000) / 10}}`, (error) => {
            if (!error) {
              acked++;
              latencies.push(now() - at);
            }
            if (--pending === 0) {
              clearInterval(timer);
              resolve();
            }
          });
        }
      }
    }, 1);
  });
  const finishedAt = now();
  clearInterval(pings);
  await Promise.all(clients.map((c) => c.end()));
  await report(job, { acked, startedAt, finishedAt, latencies });
}

const job = JSON.parse(process.argv[2] ?? '{}') as PublisherJob;
run(job).then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
