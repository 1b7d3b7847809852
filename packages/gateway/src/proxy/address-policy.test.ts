import { BlockList } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AddressCategory, addressCategory, isPublicAddress } from './address-policy.ts';

const TABLE: Array<[string, AddressCategory]> = [
  // IPv4 special-purpose ranges, first and last address of each where it matters
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'reserved'],
  ['0.255.255.255', 'reserved'],
  ['10.0.0.0', 'private'],
  ['10.255.255.255', 'private'],
  ['100.64.0.0', 'cgnat'],
  ['100.127.255.255', 'cgnat'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['169.254.169.254', 'link_local'],
  ['169.254.0.1', 'link_local'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.0.0.8', 'reserved'],
  ['192.0.2.1', 'documentation'],
  ['192.168.1.1', 'private'],
  ['198.18.0.1', 'reserved'],
  ['198.19.255.255', 'reserved'],
  ['198.51.100.7', 'documentation'],
  ['203.0.113.9', 'documentation'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.255', 'multicast'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.255', 'reserved'],
  // IPv4 neighbours of the ranges stay public
  ['1.1.1.1', 'public'],
  ['8.8.8.8', 'public'],
  ['11.0.0.1', 'public'],
  ['100.63.255.255', 'public'],
  ['100.128.0.0', 'public'],
  ['126.255.255.255', 'public'],
  ['128.0.0.0', 'public'],
  ['169.253.255.255', 'public'],
  ['172.15.255.255', 'public'],
  ['172.32.0.0', 'public'],
  ['192.0.1.1', 'public'],
  ['192.167.255.255', 'public'],
  ['192.169.0.0', 'public'],
  ['198.17.255.255', 'public'],
  ['198.20.0.0', 'public'],
  ['223.255.255.255', 'public'],
  // IPv6
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['fc00::1', 'private'],
  ['fd12:3456:789a::1', 'private'],
  ['fe80::1', 'link_local'],
  ['febf::1', 'link_local'],
  ['ff02::1', 'multicast'],
  ['ff00::', 'multicast'],
  ['2001:db8::1', 'documentation'],
  ['2001:db8:ffff::1', 'documentation'],
  ['3fff::1', 'documentation'],
  ['2001::1', 'reserved'], // Teredo
  ['100::1', 'reserved'],
  ['::2', 'reserved'],
  ['4000::1', 'reserved'], // outside 2000::/3
  ['2606:4700:4700::1111', 'public'],
  ['2001:4860:4860::8888', 'public'],
  ['2a00:1450::1', 'public'],
  // IPv6 forms that carry an IPv4 address are judged by that address
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::ffff:10.0.0.1', 'private'],
  ['::ffff:169.254.169.254', 'link_local'],
  ['::ffff:a9fe:a9fe', 'link_local'],
  ['::ffff:8.8.8.8', 'public'],
  ['::ffff:0.0.0.0', 'unspecified'],
  ['::127.0.0.1', 'reserved'], // deprecated IPv4-compatible form
  ['64:ff9b::127.0.0.1', 'loopback'],
  ['64:ff9b::7f00:1', 'loopback'],
  ['64:ff9b::a00:1', 'private'],
  ['64:ff9b::808:808', 'public'],
  ['64:ff9b:1::1', 'private'],
  ['2002:7f00:1::', 'loopback'],
  ['2002:c0a8:101::1', 'private'],
  ['2002:a9fe:a9fe::1', 'link_local'],
  ['2002:808:808::1', 'public'],
  // spellings
  ['[::1]', 'loopback'],
  ['FE80::1', 'link_local'],
  ['fe80::1%eth0', 'link_local'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['0000:0000:0000:0000:0000:ffff:7f00:0001', 'loopback'],
  // not IP literals at all
  ['0177.0.0.1', 'invalid'],
  ['127.1', 'invalid'],
  ['2130706433', 'invalid'],
  ['0x7f.0.0.1', 'invalid'],
  ['localhost', 'invalid'],
  ['', 'invalid'],
  ['1.2.3.4.5', 'invalid'],
  ['256.0.0.1', 'invalid'],
];

describe('addressCategory', () => {
  it.each(TABLE)('%s is %s', (ip, category) => {
    expect(addressCategory(ip)).toBe(category);
    expect(isPublicAddress(ip)).toBe(category === 'public');
  });
});

describe('isPublicAddress', () => {
  it('never throws and only accepts real IP literals, whatever the input', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.ipV4(), fc.ipV6(), fc.ipV4Extended()), (s) => {
        const result = isPublicAddress(s);
        expect(typeof result).toBe('boolean');
        if (result) expect(addressCategory(s)).toBe('public');
      }),
      { numRuns: 2000 },
    );
  });

  it('treats every IPv4-mapped IPv6 address exactly like the IPv4 address it carries', () => {
    fc.assert(
      fc.property(fc.ipV4(), (v4) => {
        expect(addressCategory(`::ffff:${v4}`)).toBe(addressCategory(v4));
      }),
      { numRuns: 2000 },
    );
  });

  it('agrees with a node:net BlockList of the non-public IPv4 ranges', () => {
    const blocked = new BlockList();
    for (const [net, prefix] of [
      ['0.0.0.0', 8],
      ['10.0.0.0', 8],
      ['100.64.0.0', 10],
      ['127.0.0.0', 8],
      ['169.254.0.0', 16],
      ['172.16.0.0', 12],
      ['192.0.0.0', 24],
      ['192.0.2.0', 24],
      ['192.88.99.0', 24],
      ['192.168.0.0', 16],
      ['198.18.0.0', 15],
      ['198.51.100.0', 24],
      ['203.0.113.0', 24],
      ['224.0.0.0', 4],
      ['240.0.0.0', 4],
    ] as const) {
      blocked.addSubnet(net, prefix, 'ipv4');
    }
    fc.assert(
      fc.property(fc.ipV4(), (v4) => {
        expect(isPublicAddress(v4)).toBe(!blocked.check(v4, 'ipv4'));
      }),
      { numRuns: 5000 },
    );
  });

  it('never throws on non-string input', () => {
    expect(isPublicAddress(undefined as unknown as string)).toBe(false);
    expect(isPublicAddress(42 as unknown as string)).toBe(false);
  });
});
