import { describe, expect, it } from 'vitest';
import { redirectLocation } from './https-redirect.js';

describe('redirectLocation', () => {
  const local = 'https://localhost:8443';

  it('keeps the host the client used, on the HTTPS port, with path and query', () => {
    expect(redirectLocation('192.168.10.5:8080', '/dashboards?id=1', 8443, local)).toBe(
      'https://192.168.10.5:8443/dashboards?id=1',
    );
    expect(redirectLocation('[fd00::5]:80', '/', 8443, local)).toBe('https://[fd00::5]:8443/');
    expect(redirectLocation('plant-srv', '/x', 443, local)).toBe('https://plant-srv/x');
  });

  it("uses the public URL's origin when the client asked for its host (a port forward may sit between)", () => {
    expect(redirectLocation('iot.example.com', '/login', 8443, 'https://iot.example.com')).toBe(
      'https://iot.example.com/login',
    );
  });

  it('refuses a missing or malformed Host header', () => {
    for (const host of [undefined, '', 'a b', 'evil.example/path', 'user@evil.example', 'x?y', 'x#y'])
      expect(redirectLocation(host, '/', 8443, local), String(host)).toBeUndefined();
  });

  it('redirects an absolute-form or odd request target to the root', () => {
    expect(redirectLocation('srv', 'http://evil.example/', 8443, local)).toBe('https://srv:8443/');
  });
});
