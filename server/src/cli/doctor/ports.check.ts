import { runningPostmaster } from '../../platform/db/running-postmaster.js';
import https from 'node:https';
import net from 'node:net';
import type { Config } from '../../config.js';
import type { DoctorCheck, DoctorFinding } from '../doctor-check.js';

/**
 * Each configured port is free, or held by this Stellwerk: the HTTP port when `/xapi/v1/health`
 * there answers as Stellwerk (then its other ports count as its own too), the PostgreSQL port when
 * the embedded cluster of this data directory listens on it. Anything else holding a port would stop
 * the next start.
 */

type PortState = 'free' | 'in-use' | { error: string };

export function probePort(host: string, port: number): Promise<PortState> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', (error: NodeJS.ErrnoException) =>
      resolve(error.code === 'EADDRINUSE' ? 'in-use' : { error: error.code ?? error.message }),
    );
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve('free')));
  });
}

/**
 * The health document on this machine's port, over TLS when the server serves HTTPS. The
 * certificate is not checked: only the public health answer is read, from loopback, to tell this
 * server from another process (an operator's certificate rarely names 127.0.0.1).
 */
function healthOnLoopback(port: number, tls: boolean): Promise<unknown> {
  if (!tls)
    return fetch(`http://127.0.0.1:${port}/xapi/v1/health`, { signal: AbortSignal.timeout(2000) }).then(
      (response) => response.json(),
    );
  return new Promise((resolve, reject) => {
    const request = https.get(
      { host: '127.0.0.1', port, path: '/xapi/v1/health', rejectUnauthorized: false, timeout: 2000 },
      (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          try {
            resolve(JSON.parse(text));
          } catch {
            reject(new Error('not a health document'));
          }
        });
      },
    );
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', reject);
  });
}

/** Whether a Stellwerk server answers on this port (bounded: one request, 2 s). */
async function stellwerkAnswers(port: number, tls: boolean): Promise<{ pid?: number } | undefined> {
  try {
    const body = (await healthOnLoopback(port, tls)) as {
      checkedBy?: string;
      nodes?: { id?: string; pid?: number }[];
    };
    if (!Array.isArray(body.nodes) || typeof body.checkedBy !== 'string') return undefined;
    return { pid: body.nodes.find((n) => n.id === body.checkedBy)?.pid };
  } catch {
    return undefined;
  }
}

interface PortSpec {
  variable: string;
  host: string;
  port: number;
}

function configuredPorts(config: Config): PortSpec[] {
  const ports: PortSpec[] = [
    { variable: 'STELLWERK_HTTP_PORT', host: config.httpHost, port: config.httpPort },
    { variable: 'STELLWERK_MQTT_PORT', host: config.mqttHost, port: config.mqttPort },
  ];
  if (config.mqttTlsPort !== undefined) {
    ports.push({ variable: 'STELLWERK_MQTT_TLS_PORT', host: config.mqttHost, port: config.mqttTlsPort });
  }
  if (!config.databaseUrl)
    ports.push({ variable: 'STELLWERK_PG_PORT', host: '127.0.0.1', port: config.pgPort });
  // Port 0 picks a free port at start: nothing to check.
  return ports.filter((p) => p.port !== 0);
}

export const portsCheck: DoctorCheck = {
  name: 'ports',
  async run(config) {
    const ports = configuredPorts(config);
    const states = await Promise.all(ports.map((p) => probePort(p.host, p.port)));
    const anyInUse = states.some((s) => s === 'in-use');
    const server =
      anyInUse && config.httpPort !== 0
        ? await stellwerkAnswers(config.httpPort, config.https !== 'off')
        : undefined;
    const postmaster =
      anyInUse && !config.databaseUrl
        ? await runningPostmaster(config.dataDir, { unreadable: 'absent' })
        : undefined;
    return ports.map((spec, i): DoctorFinding => {
      const state = states[i]!;
      const what = `${spec.variable} ${spec.port} on ${spec.host}`;
      const details = { variable: spec.variable, host: spec.host, port: spec.port };
      if (state === 'free') return { check: 'ports', status: 'ok', message: `${what} is free`, details };
      if (typeof state === 'object') {
        return {
          check: 'ports',
          status: 'fail',
          message: `${what} cannot be bound (${state.error}); check STELLWERK_*_HOST and the port`,
          details,
        };
      }
      const ownDatabase = spec.variable === 'STELLWERK_PG_PORT' && postmaster?.port === spec.port;
      if (server || ownDatabase) {
        const by = ownDatabase
          ? `the embedded PostgreSQL of this data directory (pid ${postmaster.pid})`
          : `this Stellwerk server${server?.pid ? ` (pid ${server.pid})` : ''}`;
        return {
          check: 'ports',
          status: 'ok',
          message: `${what} is held by ${by}`,
          details: { ...details, heldBy: 'stellwerk' },
        };
      }
      return {
        check: 'ports',
        status: 'fail',
        message: `${what} is held by another process; stop it or set ${spec.variable} to a free port`,
        details: { ...details, heldBy: 'other' },
      };
    });
  },
};
