import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * The guard of every request the service makes to a URL a tenant chose (a webhook, a model
 * connection): by default it refuses loopback, private, link-local, shared, multicast and
 * reserved addresses, since a server-side request to them would let a tenant probe the
 * service's own network (cloud metadata at 169.254.169.254 among them).
 *
 * An address is judged by ipaddr.js's ranges (the IANA special-purpose registries): only a
 * globally routable unicast address is allowed. An IPv6 address that carries an IPv4 one is
 * judged by that IPv4 address: IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d),
 * SIIT (::ffff:0:a.b.c.d), 6to4 (2002:AABB:CCDD::) and the well-known NAT64 prefix
 * (64:ff9b::a.b.c.d). The local-use NAT64 prefix (64:ff9b:1::/48) and Teredo (2001::/32) are
 * refused whole: neither is globally reachable, and Teredo hides its IPv4 address.
 */

/** The IPv4 address an IPv6 address embeds, for the forms that embed one in a known place. */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const words = address.parts;
  const fromWords = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  switch (address.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return fromWords(words[6]!, words[7]!);
    case 'rfc6052':
      // 64:ff9b::/96 only; the local-use 64:ff9b:1::/48 is refused before this.
      return fromWords(words[6]!, words[7]!);
    case '6to4':
      return fromWords(words[1]!, words[2]!);
    default:
      // IPv4-compatible (::a.b.c.d, deprecated): :: and ::1 land in 0.0.0.0/8, refused too.
      return words.slice(0, 6).every((w) => w === 0) ? fromWords(words[6]!, words[7]!) : undefined;
  }
}

const localUseNat64 = ipaddr.IPv6.parseCIDR('64:ff9b:1::/48');

/**
 * True for an address a tenant's URL must not reach by default. Anything ipaddr.js does not
 * read as an address is refused rather than guessed at; it reads the IPv4 forms a URL parser
 * also accepts (decimal, octal, hex, fewer than four parts).
 */
export function isPrivateAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return true;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return parsed.range() !== 'unicast';
  const v6 = parsed as ipaddr.IPv6;
  if (v6.zoneId !== undefined || v6.match(localUseNat64)) return true;
  const v4 = embeddedIPv4(v6);
  if (v4) return v4.range() !== 'unicast';
  return v6.range() !== 'unicast';
}

/** Names that always mean this machine (RFC 6761's localhost and the usual hosts-file aliases). */
export function isLoopbackName(name: string): boolean {
  const host = name.toLowerCase().replace(/\.+$/, '');
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host === 'localhost.localdomain' ||
    host === 'ip6-localhost' ||
    host === 'ip6-loopback'
  );
}

/** A target refused by the guard. Its message never names an address the target resolved to. */
export class RefusedTarget extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RefusedTarget';
  }
}

/** What a refused delivery or call says: the same words whatever the address was. */
export const PRIVATE_ADDRESS_REFUSAL = 'the address is private';

export interface TargetGuardOptions {
  /** Allows every address (a private network the operator trusts); the URL rules still hold. */
  allowPrivate: boolean;
  /** The setting that allows private targets, named in the refusal at registration. */
  allowSetting: string;
}

export interface TargetGuard {
  /** Why `raw` may not be stored as a target, judged without DNS; undefined when it may. */
  problemWith(raw: string): string | undefined;
  /**
   * Options for `http.request` / `https.request` to `url`: the guarded lookup (so a name is
   * refused if any of its addresses is), or a RefusedTarget thrown at once when the URL's host
   * is itself a refused address or name.
   */
  connectOptions(url: URL): { lookup?: LookupFunction };
}

/** The host of a URL as an address or a name: brackets of IPv6 and trailing dots removed. */
const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '').replace(/\.+$/, '');

/**
 * A DNS lookup for the HTTP client that refuses a name if any of its addresses is private.
 * The connection uses the very addresses checked here, so a second answer of the DNS (a
 * rebinding) cannot slip another address in between the check and the connect.
 */
const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, '', 0);
    if (addresses.some((a) => isPrivateAddress(a.address))) return callback(new RefusedTarget(PRIVATE_ADDRESS_REFUSAL), '', 0);
    if (addresses.length === 0) return callback(new RefusedTarget('the name has no address'), '', 0);
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    return callback(null, addresses[0]!.address, addresses[0]!.family);
  });
};

export function createTargetGuard(options: TargetGuardOptions): TargetGuard {
  const allowHint = `(set ${options.allowSetting}=true to allow)`;
  return {
    problemWith(raw) {
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        return 'must be an absolute URL';
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
      if (url.username !== '' || url.password !== '') return 'must not carry credentials';
      if (options.allowPrivate) return undefined;
      const host = hostOf(url);
      if (ipaddr.isValid(host)) {
        return isPrivateAddress(host)
          ? `must not be a loopback, private, link-local or reserved address, nor an IPv6 address that embeds one ${allowHint}`
          : undefined;
      }
      if (isLoopbackName(host)) return `must not be a loopback host name such as localhost ${allowHint}`;
      return undefined;
    },
    connectOptions(url) {
      if (options.allowPrivate) return {};
      const host = hostOf(url);
      // An address in the URL is never looked up, so the lookup cannot see it: judge it here.
      if (ipaddr.isValid(host) ? isPrivateAddress(host) : isLoopbackName(host)) throw new RefusedTarget(PRIVATE_ADDRESS_REFUSAL);
      return { lookup: guardedLookup };
    },
  };
}
