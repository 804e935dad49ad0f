import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Modbus TCP peers for the modbus connector test: Debian's pymodbus server (an independent
 * implementation; Debian's python3, the one with python3-pymodbus, not a pyenv shim) and a tiny
 * server that answers every request with one fixed, malformed frame.
 */

const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'modbus-server.py');

/** Table → address → value: `hr` holding registers, `ir` input registers, `co` coils, `di` discrete inputs. */
export type ModbusSeed = Partial<Record<'hr' | 'ir' | 'co' | 'di', Record<number, number | boolean>>>;

export interface PymodbusServer {
  port: number;
  stop(): Promise<void>;
}

/** Starts the pymodbus server on `port` with the seed; resolves once it listens. */
export function startPymodbus(port: number, seed: ModbusSeed): Promise<PymodbusServer> {
  const child = spawn('/usr/bin/python3', [SCRIPT, String(port), JSON.stringify(seed)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`pymodbus did not listen on ${port} within 15 s: ${output}`));
    }, 15_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`pymodbus exited with ${code}: ${output}`));
    });
    child.stdout.on('data', (chunk: Buffer) => {
      if (!chunk.toString().includes('listening')) return;
      clearTimeout(timer);
      resolve({ port, stop: () => stopChild(child) });
    });
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/** A server that answers each request with `frame(request)`: for malformed or short answers. */
export async function startRawPeer(
  frame: (request: Buffer) => Buffer,
): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.on('data', (request) => socket.write(frame(request)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
