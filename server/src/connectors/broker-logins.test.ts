import { describe, expect, it } from 'vitest';
import { sha256 } from '../platform/crypto/tokens.js';
import { BrokerLogins } from './broker-logins.js';

describe('BrokerLogins', () => {
  const hash = sha256('the device password');

  it('honours a verified login with the same password only', () => {
    const logins = new BrokerLogins();
    logins.verified('gw', hash, { id: 'c1' });
    expect(logins.whileOffline('gw', hash)).toEqual({ id: 'c1' });
    expect(logins.whileOffline('gw', sha256('another password'))).toBeNull();
    expect(logins.whileOffline('other', hash)).toBeNull();
  });

  it('forgets a login the database refused, or whose connector went', () => {
    const logins = new BrokerLogins();
    logins.verified('gw', hash, { id: 'c1' });
    logins.refused('gw');
    expect(logins.whileOffline('gw', hash)).toBeNull();
    logins.verified('gw', hash, { id: 'c1' });
    logins.verified('gw2', hash, { id: 'c2' });
    logins.forgetConnector('c1');
    expect(logins.whileOffline('gw', hash)).toBeNull();
    expect(logins.whileOffline('gw2', hash)).toEqual({ id: 'c2' });
  });

  it('honours a login only within the TTL after it was last verified', () => {
    let now = 0;
    const logins = new BrokerLogins(1000, () => now);
    logins.verified('gw', hash, { id: 'c1' });
    now = 1000;
    expect(logins.whileOffline('gw', hash)).toEqual({ id: 'c1' });
    now = 1001;
    expect(logins.whileOffline('gw', hash)).toBeNull();
    logins.verified('gw', hash, { id: 'c1' });
    expect(logins.whileOffline('gw', hash)).toEqual({ id: 'c1' });
  });
});
