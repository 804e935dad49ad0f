import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A real Debian `mosquitto` on 127.0.0.1 with a generated configuration, for mqtt-in tests. */
export interface Mosquitto {
  port: number;
  dir: string;
  stop(): Promise<void>;
}

/**
 * A port that is free on 127.0.0.1 now, for a process the test starts later. It is drawn from below the
 * kernel's ephemeral range: a port from that range (what `listen(0)` hands out) can be taken as the
 * source port of any outgoing connection on the machine before the process binds it.
 */
export async function freePort(): Promise<number> {
  const ephemeralLow = await ephemeralRangeStart();
  const low = 10_000;
  for (let attempt = 0; attempt < 100 && ephemeralLow > low + 1_000; attempt += 1) {
    const port = low + Math.floor(Math.random() * (ephemeralLow - low));
    if (await canListen(port)) return port;
  }
  return listenAndRelease(0);
}

/** The first port of the kernel's ephemeral range (Linux's default when it cannot be read). */
async function ephemeralRangeStart(): Promise<number> {
  const text = await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').catch(() => '');
  const start = Number.parseInt(text.trim(), 10);
  return Number.isFinite(start) ? start : 32768;
}

function canListen(port: number): Promise<boolean> {
  return listenAndRelease(port).then(
    () => true,
    () => false,
  );
}

async function listenAndRelease(port: number): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const bound = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return bound;
}

async function waitForPort(port: number, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`mosquitto exited: ${log()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`mosquitto did not listen on ${port}: ${log()}`);
}

/** Starts mosquitto with `lines` (listener and persistence lines are added). */
export async function startMosquitto(configure: (dir: string) => Promise<string[]>): Promise<Mosquitto> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'stellwerk-mosquitto-'));
  const port = await freePort();
  const lines = [
    `listener ${port} 127.0.0.1`,
    'persistence false',
    // Root would otherwise drop to the `mosquitto` user, who cannot read the files made here.
    `user ${os.userInfo().username}`,
    'log_dest stderr',
    ...(await configure(dir)),
  ];
  const file = path.join(dir, 'mosquitto.conf');
  await writeFile(file, `${lines.join('\n')}\n`);
  const child = spawn('mosquitto', ['-c', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await waitForPort(port, child, () => output);
  return {
    port,
    dir,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export async function mosquittoPasswd(dir: string, username: string, password: string): Promise<string> {
  const file = path.join(dir, 'passwd');
  await run('mosquitto_passwd', ['-b', '-c', file, username, password]);
  return file;
}

export interface TestPki {
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

/** CA, server certificate for 127.0.0.1 and a client certificate, made by `openssl` into `dir`. */
export async function makePki(dir: string): Promise<TestPki> {
  const p = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => run('openssl', args, { cwd: dir });
  await openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    p('ca.key'),
    '-out',
    p('ca.crt'),
    '-days',
    '1',
    '-subj',
    '/CN=Stellwerk Test CA',
  );
  const issue = async (name: string, cn: string, ext: string) => {
    await writeFile(p(`${name}.ext`), `${ext}\n`);
    await openssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      p(`${name}.key`),
      '-out',
      p(`${name}.csr`),
      '-subj',
      `/CN=${cn}`,
    );
    await openssl(
      'x509',
      '-req',
      '-in',
      p(`${name}.csr`),
      '-CA',
      p('ca.crt'),
      '-CAkey',
      p('ca.key'),
      '-CAcreateserial',
      '-out',
      p(`${name}.crt`),
      '-days',
      '1',
      '-extfile',
      p(`${name}.ext`),
    );
  };
  await issue('server', '127.0.0.1', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth');
  await issue('client', 'stellwerk-client', 'extendedKeyUsage=clientAuth');
  return {
    ca: p('ca.crt'),
    serverCert: p('server.crt'),
    serverKey: p('server.key'),
    clientCert: p('client.crt'),
    clientKey: p('client.key'),
  };
}

export async function mosquittoPub(args: string[]): Promise<void> {
  await run('mosquitto_pub', ['-h', '127.0.0.1', ...args]);
}
