import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A fake network-server API: records requests, answers with the queued `replies` (then 200 `{}`). */
export interface FakePeer {
  url: string;
  requests: Array<{ method: string; url: string; authorization: string | undefined; body: unknown }>;
  replies: Array<{ status: number; body: unknown }>;
  close(): Promise<void>;
}

export async function startFakePeer(): Promise<FakePeer> {
  const peer = { requests: [], replies: [] } as unknown as FakePeer;
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      peer.requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        authorization: req.headers.authorization,
        body: text ? (JSON.parse(text) as unknown) : null,
      });
      const reply = peer.replies.shift() ?? { status: 200, body: {} };
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  peer.url = `http://127.0.0.1:${port}`;
  peer.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return peer;
}
