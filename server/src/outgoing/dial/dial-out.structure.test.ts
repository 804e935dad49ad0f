import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Connections to targets that tenants configure are opened in this folder only (DialOut), so the
 * SSRF protection cannot be forgotten by the next connector kind or feature: every other server
 * module that opens a connection itself must be listed below with the reason its target is the
 * operator's, not a tenant's. (The database driver is not looked for: it only ever reaches the
 * server's own PostgreSQL, DATABASE_URL.)
 */

const SERVER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DOOR = path.join('outgoing', 'dial') + path.sep;

/** Files that connect by themselves, and why that is allowed. */
const OPERATOR_TARGETS: Record<string, string> = {
  'cli/doctor/ports.check.ts': "this machine's own configured HTTP port on loopback (is it this Stellwerk?)",
  'platform/http/https-redirect.ts': 'a listener (node:http server of the redirect port); it dials nowhere',
  'connectors/lwm2m/lwm2m.link.ts':
    'a listener (the UDP socket of an lwm2m connector, bound on this server); it dials nowhere',
  'connectors/lwm2m/lwm2m-session.ts':
    'CoAP requests only to the address an LwM2M client registered from, over the socket it registered on',
  'platform/mail/mailer.ts': 'STELLWERK_SMTP_URL, the server mail of the operator',
  'timeseries/targets/influxdb-v1.target.ts': 'STELLWERK_TIMESERIES_TARGETS, set by the operator',
  'timeseries/targets/influxdb-v2.target.ts': 'STELLWERK_TIMESERIES_TARGETS, set by the operator',
  'twins/geocoder.ts': 'STELLWERK_GEOCODER_URL, set by the operator',
};

/** Modules whose value imports mean connecting (type imports are fine). */
const CLIENT_LIBRARIES = [
  '(?:node:)?(?:http|https|http2|dgram)',
  'undici',
  'socks',
  'coap',
  'mqtt',
  'kafkajs',
  'nodemailer',
  '@influxdata/[\\w-]+',
];

/** What opens a connection, by the way it reads in source. */
const DIALERS: Array<[string, RegExp]> = [
  ['the global fetch', /(?<![\w.$])fetch\s*\(/],
  ['net/tls connect', /\b(?:net|tls)\.(?:connect|createConnection)\s*\(/],
  ['a raw socket', /\bnew\s+(?:net\.|tls\.)?(?:Socket|TLSSocket)\s*\(/],
  ['a WebSocket client', /\bnew\s+WebSocket\s*\(/],
  [
    'a connect function of node:net or node:tls',
    /\bimport\s*\{[^}]*\b(?:connect|createConnection)\b[^}]*\}\s*from\s*['"](?:node:)?(?:net|tls)['"]/,
  ],
  [
    'a network client library',
    new RegExp(`\\bimport\\s+(?!type\\b)[^;]*?\\bfrom\\s*['"](?:${CLIENT_LIBRARIES.join('|')})['"]`),
  ],
];

/** Source without comments (strings are left: a dialler in a string literal is rare enough). */
const code = (source: string) => source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:\\])\/\/.*$/gm, '$1');

function dialersIn(source: string): string[] {
  const text = code(source);
  return DIALERS.filter(([, pattern]) => pattern.test(text)).map(([what]) => what);
}

function serverFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return serverFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

describe('outgoing connections', () => {
  it('recognises the ways of connecting', () => {
    expect(dialersIn('const r = await fetch(url);')).toEqual(['the global fetch']);
    expect(dialersIn('await this.deps.dial.fetch(url); // fetch(x)')).toEqual([]);
    expect(dialersIn("import mqtt from 'mqtt';\nmqtt.connect(u);")).toEqual(['a network client library']);
    expect(dialersIn("import type { MqttClient } from 'mqtt';")).toEqual([]);
    expect(dialersIn("import http from 'node:http';")).toEqual(['a network client library']);
    expect(dialersIn("import type { IncomingMessage } from 'node:http';")).toEqual([]);
    expect(dialersIn("import { connect } from 'node:tls';")).toEqual([
      'a connect function of node:net or node:tls',
    ]);
    expect(dialersIn('const s = net.createConnection({ port });')).toEqual(['net/tls connect']);
    expect(dialersIn('new WebSocket(url)')).toEqual(['a WebSocket client']);
    expect(dialersIn("import { InfluxDB } from '@influxdata/influxdb-client';")).toEqual([
      'a network client library',
    ]);
  });

  it('are opened through DialOut, except towards targets the operator configures', () => {
    const found: Record<string, string[]> = {};
    for (const file of serverFiles(SERVER)) {
      const relative = path.relative(SERVER, file);
      if (relative.startsWith(DOOR)) continue;
      const dialers = dialersIn(fs.readFileSync(file, 'utf8'));
      if (dialers.length) found[relative.split(path.sep).join('/')] = dialers;
    }
    const unexplained = Object.keys(found).filter((file) => !(file in OPERATOR_TARGETS));
    expect(unexplained, 'connect through DialOut (server/src/outgoing/dial/), or explain here').toEqual([]);
    // A listed file that no longer connects by itself leaves the list.
    expect(Object.keys(OPERATOR_TARGETS).filter((file) => !(file in found))).toEqual([]);
  });
});
