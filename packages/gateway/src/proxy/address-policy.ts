/**
 * Which IP addresses the gateway may dial for a provider origin (DESIGN §4.9).
 *
 * Deliberately an allow-list at heart: an IPv6 address counts as public only inside
 * 2000::/3 (global unicast) and outside the special-purpose blocks, and IPv6 forms that
 * carry an IPv4 address (mapped, NAT64, 6to4) are judged by the IPv4 address they carry,
 * because that is where the packets end up.
 */
import { isIP } from 'node:net';

export type AddressCategory =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link_local'
  | 'cgnat'
  | 'multicast'
  | 'reserved'
  | 'unspecified'
  | 'documentation'
  /** Not an IP address at all (never public). */
  | 'invalid';

/** [network, prefix length, category] — first match wins, so specific blocks come first. */
const V4_RANGES: ReadonlyArray<readonly [number, number, AddressCategory]> = [
  [v4('0.0.0.0'), 32, 'unspecified'],
  [v4('0.0.0.0'), 8, 'reserved'], // "this network"; Linux routes 0.0.0.0 to the local host
  [v4('10.0.0.0'), 8, 'private'],
  [v4('100.64.0.0'), 10, 'cgnat'],
  [v4('127.0.0.0'), 8, 'loopback'],
  [v4('169.254.0.0'), 16, 'link_local'], // cloud metadata lives here
  [v4('172.16.0.0'), 12, 'private'],
  [v4('192.0.0.0'), 24, 'reserved'], // IETF protocol assignments
  [v4('192.0.2.0'), 24, 'documentation'],
  [v4('192.88.99.0'), 24, 'reserved'], // deprecated 6to4 relay anycast
  [v4('192.168.0.0'), 16, 'private'],
  [v4('198.18.0.0'), 15, 'reserved'], // benchmarking
  [v4('198.51.100.0'), 24, 'documentation'],
  [v4('203.0.113.0'), 24, 'documentation'],
  [v4('224.0.0.0'), 4, 'multicast'],
  [v4('240.0.0.0'), 4, 'reserved'], // includes 255.255.255.255 (broadcast)
];

/** Dotted quad (already validated by isIP) to an unsigned 32-bit number. */
function v4(dotted: string): number {
  let n = 0;
  let part = 0;
  for (let i = 0; i < dotted.length; i++) {
    const c = dotted.charCodeAt(i);
    if (c === 46 /* . */) {
      n = n * 256 + part;
      part = 0;
    } else {
      part = part * 10 + (c - 48);
    }
  }
  return n * 256 + part;
}

function classifyV4(n: number): AddressCategory {
  for (const [net, bits, category] of V4_RANGES) {
    // Division instead of >>> keeps it exact for /0..../32 without sign trouble.
    const size = 2 ** (32 - bits);
    if (Math.floor(n / size) === Math.floor(net / size)) return category;
  }
  return 'public';
}

/** Eight 16-bit groups of a valid IPv6 address (zone already removed). */
function v6Groups(text: string): number[] {
  let head = text;
  let tail = '';
  const gap = text.indexOf('::');
  if (gap !== -1) {
    head = text.slice(0, gap);
    tail = text.slice(gap + 2);
  }
  const parse = (s: string): number[] => {
    if (s === '') return [];
    const out: number[] = [];
    for (const piece of s.split(':')) {
      if (piece.includes('.')) {
        const n = v4(piece);
        out.push(Math.floor(n / 65536), n % 65536);
      } else {
        out.push(Number.parseInt(piece, 16));
      }
    }
    return out;
  };
  const a = parse(head);
  const b = parse(tail);
  const zeros = new Array<number>(8 - a.length - b.length).fill(0);
  return [...a, ...zeros, ...b];
}

function classifyV6(g: number[]): AddressCategory {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const embeddedV4 = g6 * 65536 + g7;
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0) {
    if (g5 === 0xffff) return classifyV4(embeddedV4); // ::ffff:a.b.c.d, IPv4-mapped
    if (g5 === 0 && g6 === 0) {
      if (g7 === 0) return 'unspecified';
      if (g7 === 1) return 'loopback';
    }
    return 'reserved'; // deprecated IPv4-compatible ::a.b.c.d and the rest of ::/80
  }
  if (g0 === 0x64 && g1 === 0xff9b) {
    if (g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return classifyV4(embeddedV4); // NAT64 well-known
    if (g2 === 1) return 'private'; // 64:ff9b:1::/48 local-use NAT64
    return 'reserved';
  }
  if (g0 === 0x2002) return classifyV4(g1 * 65536 + g2); // 6to4 carries the IPv4 in bits 16..47
  if (g0 === 0x2001 && g1 === 0x0db8) return 'documentation';
  if (g0 === 0x2001 && g1 < 0x0200) return 'reserved'; // 2001::/23 IETF assignments, incl. Teredo
  if (g0 === 0x3fff && g1 < 0x1000) return 'documentation'; // 3fff::/20
  if (g0 >= 0xff00) return 'multicast';
  if (g0 >= 0xfe80 && g0 <= 0xfebf) return 'link_local';
  if (g0 >= 0xfec0 && g0 <= 0xfeff) return 'private'; // deprecated site-local
  if (g0 >= 0xfc00 && g0 <= 0xfdff) return 'private'; // unique local fc00::/7
  if (g0 === 0x5f00) return 'reserved'; // SRv6 SIDs
  if (g0 >= 0x2000 && g0 <= 0x3fff) return 'public';
  return 'reserved'; // outside global unicast: 100::/64 discard and everything unallocated
}

/**
 * Category of an IP literal. Accepts `[v6]` brackets and `%zone` suffixes; anything that
 * is not an IP address is 'invalid'. Never throws.
 */
export function addressCategory(ip: string): AddressCategory {
  if (typeof ip !== 'string') return 'invalid';
  let text = ip;
  if (text.length > 2 && text.charCodeAt(0) === 91 /* [ */ && text.charCodeAt(text.length - 1) === 93) {
    text = text.slice(1, -1);
  }
  const family = isIP(text);
  if (family === 4) return classifyV4(v4(text));
  if (family !== 6) return 'invalid';
  const zone = text.indexOf('%');
  if (zone !== -1) text = text.slice(0, zone);
  return classifyV6(v6Groups(text.toLowerCase()));
}

export function isPublicAddress(ip: string): boolean {
  return addressCategory(ip) === 'public';
}
