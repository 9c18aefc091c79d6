import { describe, expect, it } from 'vitest';
import { createTargetGuard, isLoopbackName, isPrivateAddress, RefusedTarget } from '../../src/egress/target-guard.js';
import { describeRequestError } from '../../src/egress/request-error.js';

const refusing = createTargetGuard({ allowPrivate: false, allowSetting: 'LOUPE_X_ALLOW_PRIVATE' });
const allowing = createTargetGuard({ allowPrivate: true, allowSetting: 'LOUPE_X_ALLOW_PRIVATE' });

/** Every written form of a refused target the guard must see through. */
const refusedUrls = [
  // IPv4: loopback, private, link-local (cloud metadata), shared, unspecified, multicast, reserved
  'http://127.0.0.1/',
  'http://127.1.2.3:8080/hook',
  'http://10.1.2.3/',
  'http://172.16.5.4/',
  'http://192.168.0.10/',
  'http://169.254.169.254/latest/meta-data',
  'http://100.64.0.1/',
  'http://0.0.0.0/',
  'http://0/',
  'http://224.0.0.1/',
  'http://240.0.0.1/',
  'http://255.255.255.255/',
  'http://198.18.0.1/',
  // IPv4 written otherwise: short, decimal, octal, hex, zero-padded, trailing dot
  'http://127.1/',
  'http://2130706433/',
  'http://0177.0.0.1/',
  'http://0x7f.0.0.1/',
  'http://0x7f000001/',
  'http://127.000.000.001/',
  'http://0xa9.0xfe.0xa9.0xfe/',
  'http://127.0.0.1./',
  // IPv6 of its own: loopback, unspecified, unique local, link-local, site-local, multicast
  'http://[::1]/',
  'http://[::]/',
  'http://[fd12:3456::1]/',
  'http://[fe80::1]/',
  'http://[fec0::1]/',
  'http://[ff02::1]/',
  'http://[0:0:0:0:0:0:0:1]/',
  // IPv6 carrying a private IPv4: mapped, compatible, SIIT, 6to4, NAT64 (well-known and local-use)
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:7f00:1]/',
  'http://[0:0:0:0:0:ffff:a9fe:a9fe]/',
  'http://[::127.0.0.1]/',
  'http://[::10.0.0.1]/',
  'http://[::ffff:0:127.0.0.1]/',
  'http://[2002:7f00:1::]/',
  'http://[2002:a9fe:a9fe::1]/',
  'http://[2002:c0a8:1::]/',
  'http://[64:ff9b::7f00:1]/',
  'http://[64:ff9b::169.254.169.254]/',
  'http://[64:ff9b:1::7f00:1]/',
  'http://[64:ff9b:1::808:808]/',
  // Teredo, whatever it carries
  'http://[2001::1]/',
  'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/',
  // loopback names in any case, with trailing dots, and their subdomains
  'http://localhost/',
  'http://localhost./',
  'http://LOCALHOST:3000/',
  'http://LocalHost../',
  'http://api.localhost/',
  'http://Api.LocalHost./',
  'http://localhost.localdomain/',
  'http://ip6-localhost/',
];

const allowedUrls = [
  'https://example.com/hook',
  'https://hooks.example.com./loupe',
  'http://93.184.216.34/',
  'http://8.8.8.8:8080/x',
  'http://172.32.0.1/',
  'http://[2606:4700::1111]/',
  'http://[::ffff:8.8.8.8]/',
  'http://[64:ff9b::8.8.8.8]/',
  'http://[2002:808:808::1]/',
  'https://localhost.example.com/',
  'https://mylocalhost/',
];

describe('the target guard: addresses', () => {
  it('refuses loopback, private, link-local, shared, reserved and embedding addresses; allows public ones', () => {
    for (const a of [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '192.0.2.1',
      '::1',
      '::',
      'fe80::1',
      'fd12::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '::7f00:1',
      '2002:7f00:1::',
      '64:ff9b::a00:1',
      '64:ff9b:1::7f00:1',
      '2001::1',
      'fe80::1%eth0',
      '224.0.0.1',
      'not-an-ip',
      '',
    ]) {
      expect(isPrivateAddress(a), a).toBe(true);
    }
    for (const a of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::'])
      expect(isPrivateAddress(a), a).toBe(false);
  });

  it('knows the loopback names in any case and with trailing dots', () => {
    for (const n of ['localhost', 'LOCALHOST.', 'a.b.localhost', 'x.LocalHost..', 'ip6-loopback']) expect(isLoopbackName(n), n).toBe(true);
    for (const n of ['example.com', 'localhost.example.com', 'notlocalhost']) expect(isLoopbackName(n), n).toBe(false);
  });
});

describe('the target guard: URLs at registration', () => {
  it('refuses every private form before any DNS, naming the setting that allows them', () => {
    for (const url of refusedUrls) {
      const problem = refusing.problemWith(url);
      expect(problem, url).toMatch(/must not be a loopback/);
      expect(problem, url).toContain('LOUPE_X_ALLOW_PRIVATE=true');
    }
  });

  it('allows public addresses and names', () => {
    for (const url of allowedUrls) expect(refusing.problemWith(url), url).toBeUndefined();
  });

  it('allows private targets when told, and refuses what is not an http URL either way', () => {
    for (const url of refusedUrls) expect(allowing.problemWith(url), url).toBeUndefined();
    for (const guard of [refusing, allowing]) {
      expect(guard.problemWith('file:///etc/passwd')).toMatch(/http/);
      expect(guard.problemWith('not a url')).toMatch(/absolute/);
      expect(guard.problemWith('https://user:pw@example.com/')).toMatch(/credentials/);
    }
  });
});

describe('the target guard: at connection', () => {
  it('refuses an address or loopback name in the URL at once, in words that name no address', () => {
    for (const url of refusedUrls) {
      let refusal: unknown;
      try {
        refusing.connectOptions(new URL(url));
      } catch (error) {
        refusal = error;
      }
      expect(refusal, url).toBeInstanceOf(RefusedTarget);
      expect(describeRequestError(refusal)).toBe('refused: the address is private');
    }
  });

  it('hands a name to the guarded lookup, and nothing when private targets are allowed', () => {
    expect(refusing.connectOptions(new URL('https://example.com/')).lookup).toBeTypeOf('function');
    expect(allowing.connectOptions(new URL('http://127.0.0.1/'))).toEqual({});
  });

  it('the guarded lookup refuses a name that resolves to a private address, without saying which', async () => {
    const { lookup } = refusing.connectOptions(new URL('https://example.com/'));
    // The lookup of any name: here one that resolves to this machine (127.0.0.1, ::1).
    const error = await new Promise<unknown>((resolve) => lookup!('localhost', { all: true }, (e) => resolve(e)));
    expect(error).toBeInstanceOf(RefusedTarget);
    expect(describeRequestError(error)).toBe('refused: the address is private');
  });
});

describe('describing a failed request', () => {
  it('never repeats the address a connection error names', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:443'), {
      code: 'ECONNREFUSED',
      address: '10.0.0.5',
      port: 443,
    });
    expect(describeRequestError(refused)).toBe('connection refused (ECONNREFUSED)');
    const both = Object.assign(new AggregateError([refused, refused], ''), {});
    expect(describeRequestError(both)).toBe('connection refused (ECONNREFUSED)');
    const tls = Object.assign(new Error("Hostname/IP does not match certificate's altnames: IP: 10.0.0.5"), {
      code: 'ERR_TLS_CERT_ALTNAME_INVALID',
    });
    expect(describeRequestError(tls)).toBe('request failed (ERR_TLS_CERT_ALTNAME_INVALID)');
    expect(describeRequestError(new Error('timed out after 300 ms'))).toBe('timed out after 300 ms');
  });
});
