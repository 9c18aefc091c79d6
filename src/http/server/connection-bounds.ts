import type { Server } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import ipaddr from 'ipaddr.js';
import type { Config } from '../../config.js';

/**
 * How many client connections the service holds open at once (decision 090): in total, so that
 * a flood of connections never takes the descriptors the stores, the ingest log and the health
 * check need; and per client address, so that one client cannot take the total from the others.
 */
export interface ConnectionBounds {
  total: number;
  /** 0: no bound per address. */
  perAddress: number;
  /** The process's open-file limit the total was measured against, when known. */
  openFileLimit: number | undefined;
  /** LOUPE_MAX_CONNECTIONS when it asked for more than the open-file limit leaves room for. */
  lowered?: { from: number } | undefined;
}

/** Descriptors the total leaves to the rest of the process: a quarter of the limit, at least 128. */
export function reservedDescriptors(openFileLimit: number): number {
  return Math.max(128, Math.ceil(openFileLimit / 4));
}

/** The total when the open-file limit is unlimited or unknown. */
const unknownLimitTotal = 65_536;
/** The default per-address bound's ceiling: more than any one client needs, far below a flood. */
const perAddressCeiling = 1024;

export function connectionBounds(
  config: Pick<Config, 'LOUPE_MAX_CONNECTIONS' | 'LOUPE_MAX_CONNECTIONS_PER_IP' | 'LOUPE_TRUST_PROXY'>,
  openFileLimit: number | undefined,
): ConnectionBounds {
  const room = openFileLimit === undefined ? unknownLimitTotal : Math.max(1, openFileLimit - reservedDescriptors(openFileLimit));
  const asked = config.LOUPE_MAX_CONNECTIONS;
  const total = Math.min(asked ?? room, room);
  // Behind a proxy every connection comes from a proxy's address: no default bound per address.
  const perAddress =
    config.LOUPE_MAX_CONNECTIONS_PER_IP ??
    (config.LOUPE_TRUST_PROXY === false ? Math.min(perAddressCeiling, Math.max(1, Math.floor(total / 4))) : 0);
  return { total, perAddress, openFileLimit, lowered: asked !== undefined && asked > room ? { from: asked } : undefined };
}

/**
 * The address a connection counts against: an IPv4 address (IPv4-mapped IPv6 included), or an
 * IPv6 address's /64 network, the block one subscriber or host is given.
 */
export function addressKey(remoteAddress: string | undefined): string {
  if (remoteAddress === undefined) return 'unknown';
  try {
    const address = ipaddr.process(remoteAddress);
    if (address.kind() === 'ipv4') return address.toString();
    const parts = (address as ipaddr.IPv6).parts.slice(0, 4).concat([0, 0, 0, 0]);
    return `${new ipaddr.IPv6(parts).toString()}/64`;
  } catch {
    return remoteAddress;
  }
}

type Bound = 'total' | 'perAddress';

/**
 * Refused connections, told in one warning line when the first is refused and then at most one
 * line per interval while refusals go on, each with the counts since the line before: a flood
 * never floods the log.
 */
class RefusalLog {
  private counts: Record<Bound, number> = { total: 0, perAddress: 0 };
  private addresses = new Map<string, number>();
  private lastLineAt = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly log: FastifyBaseLogger,
    private readonly bounds: ConnectionBounds,
    private readonly intervalMs: number,
  ) {}

  note(bound: Bound, address: string) {
    this.counts[bound] += 1;
    this.addresses.set(address, (this.addresses.get(address) ?? 0) + 1);
    if (this.timer) return;
    const wait = this.lastLineAt + this.intervalMs - Date.now();
    if (wait <= 0) this.write();
    else this.timer = setTimeout(() => this.write(), wait).unref();
  }

  private write() {
    this.timer = undefined;
    this.lastLineAt = Date.now();
    const busiest = [...this.addresses].sort((a, b) => b[1] - a[1]).slice(0, 5);
    this.log.warn(
      {
        refused: { ...this.counts },
        bounds: { total: this.bounds.total, perAddress: this.bounds.perAddress, openFileLimit: this.bounds.openFileLimit },
        addresses: Object.fromEntries(busiest),
      },
      'refusing new connections: the connection bound is reached (LOUPE_MAX_CONNECTIONS, LOUPE_MAX_CONNECTIONS_PER_IP); ' +
        `at most one such line every ${Math.round(this.intervalMs / 1000)} s`,
    );
    this.counts = { total: 0, perAddress: 0 };
    this.addresses.clear();
  }
}

/**
 * Holds the server to its bounds. Over the total, Node closes a new connection before it is
 * read (`maxConnections`); over its address's bound, a new connection is closed as soon as it
 * is accepted. Neither gets an answer: reading its request is what the bound saves.
 */
export function boundConnections(
  server: Server,
  bounds: ConnectionBounds,
  log: FastifyBaseLogger,
  options: { logIntervalMs?: number } = {},
) {
  const refusals = new RefusalLog(log, bounds, options.logIntervalMs ?? 60_000);
  server.maxConnections = bounds.total;
  server.on('drop', (dropped) => refusals.note('total', addressKey(dropped?.remoteAddress)));
  if (bounds.perAddress === 0) return;
  const open = new Map<string, number>();
  server.on('connection', (socket: import('node:net').Socket) => {
    const address = addressKey(socket.remoteAddress);
    const count = open.get(address) ?? 0;
    if (count >= bounds.perAddress) {
      socket.destroy();
      refusals.note('perAddress', address);
      return;
    }
    open.set(address, count + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else open.delete(address);
    });
  });
}
