import dns from 'node:dns';
import net from 'node:net';
import { Agent } from 'undici';

// Where webhooks may go (issue 53 item 4): no request into a private network, checked
// when an endpoint is made and on every attempt, against the address the connection
// then uses (resolved once, and that address pinned: a DNS answer cannot change
// between the check and the connect).

/** Ranges no webhook reaches unless WEBHOOK_ALLOW_CIDRS names them. */
const REFUSED: ReadonlyArray<readonly [string, number, 'ipv4' | 'ipv6', string]> = [
  ['0.0.0.0', 8, 'ipv4', 'a "this network" address'],
  ['10.0.0.0', 8, 'ipv4', 'a private address'],
  ['100.64.0.0', 10, 'ipv4', 'a carrier-grade NAT address'],
  ['127.0.0.0', 8, 'ipv4', 'a loopback address'],
  ['169.254.0.0', 16, 'ipv4', 'a link-local address'],
  ['172.16.0.0', 12, 'ipv4', 'a private address'],
  ['192.0.0.0', 24, 'ipv4', 'an IETF protocol address'],
  ['192.168.0.0', 16, 'ipv4', 'a private address'],
  ['198.18.0.0', 15, 'ipv4', 'a benchmarking address'],
  ['224.0.0.0', 3, 'ipv4', 'a multicast or reserved address'],
  ['::', 128, 'ipv6', 'the unspecified address'],
  ['::1', 128, 'ipv6', 'a loopback address'],
  ['::ffff:0:0', 96, 'ipv6', 'an IPv4-mapped IPv6 address'],
  ['64:ff9b::', 96, 'ipv6', 'a NAT64 address'],
  ['fc00::', 7, 'ipv6', 'a private (unique local) address'],
  ['fe80::', 10, 'ipv6', 'a link-local address'],
  ['ff00::', 8, 'ipv6', 'a multicast address'],
];

const RANGES = REFUSED.map(([network, bits, f, what]) => {
  const list = new net.BlockList();
  list.addSubnet(network, bits, f);
  return { list, f, what };
});
const MAPPED = RANGES.find(({ what }) => what.includes('IPv4-mapped'))!;

const familyOf = (address: string) => (net.isIPv6(address) ? 'ipv6' : 'ipv4');

export class AddressPolicy {
  private readonly allowed = new net.BlockList();

  constructor(
    private readonly allowCidrs: readonly string[],
    private readonly allowHttp: boolean,
  ) {
    for (const entry of allowCidrs) {
      const [address, bits] = entry.split('/') as [string, string];
      this.allowed.addSubnet(address, Number(bits), familyOf(address));
    }
  }

  /** Why webhooks may not use this URL's scheme, or undefined. */
  schemeRefusal(url: URL): string | undefined {
    if (url.protocol === 'https:' || (url.protocol === 'http:' && this.allowHttp)) return undefined;
    if (url.protocol === 'http:') return `${url.origin} is http: (unencrypted); use https:, or set WEBHOOK_ALLOW_HTTP=true`;
    return `${url.protocol} is not a webhook scheme; use https:`;
  }

  /** Why webhooks may not reach `address`, naming the setting that would allow it, or undefined. */
  refusal(address: string): string | undefined {
    const family = familyOf(address);
    if (this.allowed.check(address, family)) return undefined;
    // A mapped address is refused as such, whatever IPv4 address it carries (BlockList would match it against IPv4 ranges).
    const mapped = family === 'ipv6' && /^::ffff:/i.test(address);
    const range = mapped ? MAPPED : RANGES.find(({ list, f }) => f === family && list.check(address, family));
    if (!range) return undefined;
    return `${address} is ${range.what}; webhooks reach only public addresses unless WEBHOOK_ALLOW_CIDRS names its range (now ${this.allowCidrs.join(',') || 'empty'})`;
  }

  /**
   * An undici dispatcher for one attempt to `url`: its connection resolves the host
   * once, refuses it if `refusal` does, and connects to that same address. An address
   * literal is checked here, since Node does not look one up.
   */
  dispatcherFor(url: URL): { agent: Agent; refused?: string } {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const refused = this.schemeRefusal(url) ?? (net.isIP(host) ? this.refusal(host) : undefined);
    const agent = new Agent({
      connect: {
        lookup: (hostname, options, callback) => {
          dns.lookup(hostname, { all: true }, (err, addresses) => {
            if (err) return callback(err, '', 4);
            const first = addresses[0];
            const blocked = addresses.map((a) => this.refusal(a.address)).find((why) => why !== undefined);
            if (!first || blocked) return callback(new BlockedError(blocked ?? `${hostname} has no address`), '', 4);
            // Node asks for a list when it races address families (autoSelectFamily).
            if ((options as dns.LookupOptions).all) (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, [first]);
            else callback(null, first.address, first.family);
          });
        },
      },
    });
    return { agent, refused };
  }

  /** Resolves `url`'s host as an attempt would and says why it is refused, or undefined. */
  async check(url: URL): Promise<string | undefined> {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const scheme = this.schemeRefusal(url);
    if (scheme || net.isIP(host)) return scheme ?? this.refusal(host);
    const addresses = await dns.promises.lookup(host, { all: true }).catch(() => []);
    return addresses.map((a) => this.refusal(a.address)).find((why) => why !== undefined);
  }
}

/** A connection refused by the policy: the attempt's error, and a 422 blocked_address at creation. */
export class BlockedError extends Error {}
