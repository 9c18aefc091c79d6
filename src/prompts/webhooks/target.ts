import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Addresses a webhook may not reach unless LOUPE_WEBHOOK_ALLOW_PRIVATE=true: loopback,
 * private, link-local (cloud metadata at 169.254.169.254), shared, multicast and reserved
 * ranges. A server-side request to them would let a tenant probe the service's own network.
 */
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

/** True for an address a webhook must not reach by default (IPv4-mapped IPv6 is judged as IPv4). */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true; // not an address at all: refuse rather than guess
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return blocked.check(mapped[1]!, 'ipv4');
  return blocked.check(address, 'ipv6');
}

export class RefusedTarget extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RefusedTarget';
  }
}

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

/**
 * What can be said of a URL before any DNS: its scheme, no credentials, and, when its host is
 * an address or a local name, whether that is allowed. Names are checked again at delivery.
 */
export function checkTargetUrl(raw: string, allowPrivate: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  if (url.username !== '' || url.password !== '') return 'must not carry credentials';
  if (allowPrivate) return undefined;
  const host = hostOf(url).toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost'))
    return 'must not be a loopback host (set LOUPE_WEBHOOK_ALLOW_PRIVATE=true to allow)';
  if (isIP(host) !== 0 && isPrivateAddress(host)) {
    return 'must not be a loopback, private or link-local address (set LOUPE_WEBHOOK_ALLOW_PRIVATE=true to allow)';
  }
  return undefined;
}

/**
 * A DNS lookup for the HTTP client that refuses a name if any of its addresses is private.
 * The connection uses the very addresses checked here, so a second answer of the DNS (a
 * rebinding) cannot slip another address in between the check and the connect.
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, '', 0);
    const refused = addresses.find((a) => isPrivateAddress(a.address));
    if (refused) {
      return callback(new RefusedTarget(`${hostname} resolves to ${refused.address}, a loopback, private or link-local address`), '', 0);
    }
    if (addresses.length === 0) return callback(new Error(`${hostname} has no address`), '', 0);
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    return callback(null, addresses[0]!.address, addresses[0]!.family);
  });
};
