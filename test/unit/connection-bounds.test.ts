import { describe, expect, it } from 'vitest';
import { addressKey, connectionBounds } from '../../src/http/server/connection-bounds.js';
import { loadConfig } from '../../src/config.js';

describe('connection bounds', () => {
  it('keeps the total below the open-file limit, leaving a reserve for the stores', () => {
    expect(connectionBounds(loadConfig({}), 256)).toMatchObject({ total: 128, perAddress: 32, openFileLimit: 256 });
    expect(connectionBounds(loadConfig({}), 1024)).toMatchObject({ total: 768, perAddress: 192 });
    expect(connectionBounds(loadConfig({}), 1_048_576)).toMatchObject({ total: 786_432, perAddress: 1024 });
  });

  it('takes the configured bounds, but never more than the open-file limit leaves room for', () => {
    const config = loadConfig({ LOUPE_MAX_CONNECTIONS: '100', LOUPE_MAX_CONNECTIONS_PER_IP: '7' });
    expect(connectionBounds(config, 4096)).toMatchObject({ total: 100, perAddress: 7, lowered: undefined });
    expect(connectionBounds(loadConfig({ LOUPE_MAX_CONNECTIONS: '5000' }), 1024)).toMatchObject({ total: 768, lowered: { from: 5000 } });
    expect(connectionBounds(loadConfig({ LOUPE_MAX_CONNECTIONS_PER_IP: '0' }), 1024).perAddress).toBe(0);
  });

  it('has no default bound per address behind a proxy, whose address every connection has', () => {
    expect(connectionBounds(loadConfig({ LOUPE_TRUST_PROXY: 'true' }), 1024).perAddress).toBe(0);
    expect(connectionBounds(loadConfig({ LOUPE_TRUST_PROXY: 'true', LOUPE_MAX_CONNECTIONS_PER_IP: '50' }), 1024).perAddress).toBe(50);
  });

  it('counts IPv4 clients by address and IPv6 clients by /64 network', () => {
    expect(addressKey('10.1.2.3')).toBe('10.1.2.3');
    expect(addressKey('::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(addressKey('2001:db8:1:2:aaaa::1')).toBe(addressKey('2001:db8:1:2:bbbb:cccc:dddd:eeee'));
    expect(addressKey('2001:db8:1:2::1')).not.toBe(addressKey('2001:db8:1:3::1'));
    expect(addressKey(undefined)).toBe('unknown');
  });
});
