import net from 'node:net';

/**
 * A TCP proxy on loopback in front of a real server (PostgreSQL): `cut()` closes its port and every
 * connection through it, as a database that went away; `restore()` listens on the same port again.
 */
export class TcpProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  private target: { host: string; port: number } | undefined;
  port = 0;

  async listen(): Promise<void> {
    const server = net.createServer((client) => {
      if (!this.target) return client.destroy();
      const upstream = net.connect(this.target);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  /** Points the proxy at `url`'s host and port; returns the same URL through the proxy. */
  route(url: string): string {
    const parsed = new URL(url);
    this.target = { host: parsed.hostname, port: Number(parsed.port || 5432) };
    parsed.hostname = '127.0.0.1';
    parsed.port = String(this.port);
    return parsed.toString();
  }

  /** New connections are refused and open ones are dropped. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  async restore(): Promise<void> {
    await this.listen();
  }

  async close(): Promise<void> {
    await this.cut();
  }
}
