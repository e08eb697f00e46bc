import assert from 'node:assert/strict';
import { isIP } from 'node:net';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { compareIps, parseCidr, parseIp, sortIps } from '../../../src/ipam/ip-address.js';

void describe('parseIp', () => {
  const valid: { name: string; text: string; family: 'ipv4' | 'ipv6'; value: bigint }[] = [
    { name: 'IPv4 zero address', text: '0.0.0.0', family: 'ipv4', value: 0n },
    { name: 'IPv4 broadcast', text: '255.255.255.255', family: 'ipv4', value: 0xffffffffn },
    { name: 'IPv4 private', text: '192.168.0.10', family: 'ipv4', value: 0xc0a8000an },
    { name: 'IPv4 with zero octets', text: '10.0.0.1', family: 'ipv4', value: 0x0a000001n },
    { name: 'IPv6 unspecified', text: '::', family: 'ipv6', value: 0n },
    { name: 'IPv6 loopback', text: '::1', family: 'ipv6', value: 1n },
    { name: 'IPv6 trailing ::', text: 'fd00::', family: 'ipv6', value: 0xfd00n << 112n },
    {
      name: 'IPv6 full form',
      text: '2408:4005:3bc:1:0:0:0:20',
      family: 'ipv6',
      value: (0x2408400503bc0001n << 64n) | 0x20n,
    },
    {
      name: 'IPv6 compressed middle',
      text: '2408:4005:3bc:1::20',
      family: 'ipv6',
      value: (0x2408400503bc0001n << 64n) | 0x20n,
    },
    { name: 'IPv6 upper case', text: 'FD00::ABCD', family: 'ipv6', value: (0xfd00n << 112n) | 0xabcdn },
    {
      name: 'IPv6 all ones',
      text: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
      family: 'ipv6',
      value: (1n << 128n) - 1n,
    },
    { name: 'IPv6 with embedded IPv4', text: '::ffff:192.168.0.1', family: 'ipv6', value: 0xffffc0a80001n },
    {
      name: 'IPv6 full form with embedded IPv4',
      text: '64:ff9b:0:0:0:0:10.0.0.1',
      family: 'ipv6',
      value: (0x64ff9bn << 96n) | 0x0a000001n,
    },
    {
      name: 'IPv6 :: standing for one group',
      text: '1:2:3:4:5:6::8',
      family: 'ipv6',
      value: 0x0001000200030004000500060000_0008n,
    },
  ];
  for (const row of valid) {
    void it(`accepts ${row.name}: ${row.text}`, () => {
      assert.deepEqual(parseIp(row.text), { family: row.family, value: row.value });
    });
  }

  const invalid: { name: string; text: string }[] = [
    { name: 'empty text', text: '' },
    { name: 'IPv4 leading zero', text: '10.0.0.01' },
    { name: 'IPv4 octal-looking octet', text: '010.0.0.1' },
    { name: 'IPv4 octet above 255', text: '10.0.0.256' },
    { name: 'IPv4 with three octets', text: '10.0.1' },
    { name: 'IPv4 with five octets', text: '10.0.0.0.1' },
    { name: 'IPv4 empty octet', text: '10..0.1' },
    { name: 'IPv4 with a sign', text: '+1.0.0.1' },
    { name: 'IPv4 with spaces', text: ' 10.0.0.1' },
    { name: 'IPv4 in hex', text: '0x0a.0.0.1' },
    { name: 'IPv4 with a prefix', text: '10.0.0.0/8' },
    { name: 'IPv6 with two ::', text: '1::2::3' },
    { name: 'IPv6 with nine groups', text: '1:2:3:4:5:6:7:8:9' },
    { name: 'IPv6 with seven groups and no ::', text: '1:2:3:4:5:6:7' },
    { name: 'IPv6 with eight groups and ::', text: '1:2:3:4::5:6:7:8' },
    { name: 'IPv6 group of five digits', text: '12345::1' },
    { name: 'IPv6 with a non-hex digit', text: 'fd0g::1' },
    { name: 'IPv6 single leading colon', text: ':1:2:3:4:5:6:7' },
    { name: 'IPv6 single trailing colon', text: '1:2:3:4:5:6:7:' },
    { name: 'IPv6 with a zone', text: 'fe80::1%eth0' },
    { name: 'IPv6 with a prefix', text: 'fd00::/64' },
    { name: 'IPv6 embedded IPv4 not last', text: '::1.2.3.4:1' },
    { name: 'IPv6 embedded IPv4 with a leading zero', text: '::ffff:1.2.3.04' },
    { name: 'IPv6 embedded IPv4 making nine groups', text: '1:2:3:4:5:6:7:1.2.3.4' },
    { name: 'IPv6 in brackets', text: '[::1]' },
  ];
  for (const row of invalid) {
    void it(`refuses ${row.name}: ${JSON.stringify(row.text)}`, () => {
      assert.equal(parseIp(row.text), undefined);
    });
  }

  void it('agrees with node:net on which texts are addresses', () => {
    const ipv4 = fc.tuple(fc.nat(300), fc.nat(300), fc.nat(300), fc.nat(300)).map((parts) => parts.join('.'));
    const text = fc.oneof(
      ipv4,
      fc.ipV4(),
      fc.ipV6(),
      fc.string({ unit: fc.constantFrom(...Array.from('0123456789abcdef:.')) }),
    );
    fc.assert(
      fc.property(text, (candidate) => {
        const expected = isIP(candidate);
        const parsed = parseIp(candidate);
        assert.equal(parsed === undefined ? 0 : parsed.family === 'ipv4' ? 4 : 6, expected, candidate);
      }),
      { numRuns: 2000 },
    );
  });
});

void describe('parseCidr', () => {
  const valid: { text: string; family: 'ipv4' | 'ipv6'; prefixLength: number }[] = [
    { text: '192.168.0.0/24', family: 'ipv4', prefixLength: 24 },
    { text: '0.0.0.0/0', family: 'ipv4', prefixLength: 0 },
    { text: '10.0.0.1/32', family: 'ipv4', prefixLength: 32 },
    { text: '192.168.0.77/16', family: 'ipv4', prefixLength: 16 },
    { text: '2408:4005:3bc:1::/64', family: 'ipv6', prefixLength: 64 },
    { text: '::/0', family: 'ipv6', prefixLength: 0 },
    { text: 'fd00::1/128', family: 'ipv6', prefixLength: 128 },
  ];
  for (const row of valid) {
    void it(`accepts ${row.text}`, () => {
      const parsed = parseCidr(row.text);
      assert.equal(parsed?.ip.family, row.family);
      assert.equal(parsed.prefixLength, row.prefixLength);
      assert.deepEqual(parsed.ip, parseIp(row.text.split('/')[0] ?? ''));
    });
  }

  const invalid: { name: string; text: string }[] = [
    { name: 'no prefix', text: '192.168.0.0' },
    { name: 'empty prefix', text: '192.168.0.0/' },
    { name: 'IPv4 prefix above 32', text: '192.168.0.0/33' },
    { name: 'IPv6 prefix above 128', text: 'fd00::/129' },
    { name: 'prefix with a leading zero', text: '10.0.0.0/08' },
    { name: 'negative prefix', text: '10.0.0.0/-1' },
    { name: 'two slashes', text: '10.0.0.0/8/8' },
    { name: 'malformed address', text: '10.0.0/8' },
    { name: 'prefix as a netmask', text: '10.0.0.0/255.0.0.0' },
    { name: 'empty text', text: '' },
  ];
  for (const row of invalid) {
    void it(`refuses ${row.name}: ${JSON.stringify(row.text)}`, () => {
      assert.equal(parseCidr(row.text), undefined);
    });
  }
});

void describe('compareIps', () => {
  const rows: { name: string; a: string; b: string; expected: -1 | 0 | 1 }[] = [
    { name: 'numeric, not textual, IPv4 order', a: '10.0.0.9', b: '10.0.0.10', expected: -1 },
    { name: 'IPv4 octets weigh by position', a: '10.1.0.0', b: '10.0.255.255', expected: 1 },
    { name: 'equal IPv4', a: '10.0.0.1', b: '10.0.0.1', expected: 0 },
    { name: 'IPv4 before IPv6', a: '255.255.255.255', b: '::', expected: -1 },
    { name: 'IPv6 after IPv4', a: '::1', b: '0.0.0.0', expected: 1 },
    { name: 'numeric IPv6 order', a: 'fd00::9', b: 'fd00::10', expected: -1 },
    { name: 'IPv6 spellings of one address are equal', a: 'FD00:0:0::1', b: 'fd00::1', expected: 0 },
    { name: 'addresses before unparsable text', a: 'ffff::', b: 'garbage', expected: -1 },
    { name: 'unparsable text after addresses', a: '10.0.0.256', b: '10.0.0.1', expected: 1 },
    { name: 'unparsable texts by text', a: 'a', b: 'b', expected: -1 },
    { name: 'unparsable texts by text, reversed', a: 'b', b: 'a', expected: 1 },
    { name: 'equal unparsable texts', a: 'x', b: 'x', expected: 0 },
  ];
  for (const row of rows) {
    void it(`${row.name}: ${row.a} vs ${row.b}`, () => {
      assert.equal(Math.sign(compareIps(row.a, row.b)), row.expected);
    });
  }

  const anyIpText = fc.oneof(
    fc.ipV4(),
    fc.ipV6(),
    fc.constantFrom('::', '::1', '0.0.0.0', '10.0.0.1', 'fd00::1', 'FD00::1', 'not-an-ip', '1.2.3.04', ''),
    fc.string({ maxLength: 6 }),
  );

  void it('is a total order: reflexive, antisymmetric and transitive', () => {
    fc.assert(
      fc.property(anyIpText, anyIpText, anyIpText, (a, b, c) => {
        assert.equal(compareIps(a, a), 0);
        assert.equal(Math.sign(compareIps(a, b)) + Math.sign(compareIps(b, a)), 0);
        if (compareIps(a, b) <= 0 && compareIps(b, c) <= 0) assert.ok(compareIps(a, c) <= 0);
        // Equal elements are interchangeable: they compare the same against any third one.
        if (compareIps(a, b) === 0) assert.equal(Math.sign(compareIps(a, c)), Math.sign(compareIps(b, c)));
      }),
      { numRuns: 2000 },
    );
  });

  void it('sorting is independent of input order and leaves every adjacent pair in order', () => {
    fc.assert(
      fc.property(fc.array(anyIpText, { maxLength: 30 }), fc.nat(), (texts, seed) => {
        const sorted = [...texts].sort(compareIps);
        const rotated = [...texts.slice(seed % (texts.length || 1)), ...texts.slice(0, seed % (texts.length || 1))];
        const resorted = [...rotated].reverse().sort(compareIps);
        assert.deepEqual(resorted.map(canonical), sorted.map(canonical));
        for (let index = 1; index < sorted.length; index++) {
          assert.ok(compareIps(sorted[index - 1] ?? '', sorted[index] ?? '') <= 0);
        }
      }),
    );
  });

  void it('orders parsed addresses by family, then by value', () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), fc.oneof(fc.ipV4(), fc.ipV6()), (a, b) => {
        const pa = parseIp(a);
        const pb = parseIp(b);
        assert.ok(pa !== undefined && pb !== undefined);
        const expected =
          pa.family !== pb.family
            ? pa.family === 'ipv4'
              ? -1
              : 1
            : pa.value < pb.value
              ? -1
              : pa.value > pb.value
                ? 1
                : 0;
        assert.equal(Math.sign(compareIps(a, b)), expected);
      }),
    );
  });
});

/** Equal-comparing spellings of one address (FD00::1 and fd00::1) map to one key, so sorted lists compare equal. */
function canonical(text: string): string {
  const parsed = parseIp(text);
  return parsed === undefined ? `text:${text}` : `${parsed.family}:${parsed.value.toString(16)}`;
}

void describe('sortIps', () => {
  const anyIpText = fc.oneof(
    fc.ipV4(),
    fc.ipV6(),
    fc.constantFrom(
      '::',
      '::1',
      '0::1',
      '0.0.0.0',
      '255.255.255.255',
      '10.0.0.1',
      'fd00::1',
      'FD00::1',
      'x',
      '1.2.3.04',
      '',
    ),
    fc.string({ maxLength: 6 }),
  );

  void it('gives the order of compareIps, keeping equal addresses in input order, on every call', () => {
    fc.assert(
      fc.property(fc.array(anyIpText, { maxLength: 30 }), (texts) => {
        // Array.prototype.sort is stable: equal addresses ('::1', '0::1') keep their input order in both.
        const expected = [...texts].sort(compareIps);
        assert.deepEqual(sortIps(texts), expected);
        // A second call answers from the keys the first one kept: the same order.
        assert.deepEqual(sortIps(texts), expected);
      }),
      { numRuns: 1000 },
    );
  });

  const table: { name: string; texts: string[]; expected: string[] }[] = [
    {
      name: 'numeric, not text, order',
      texts: ['10.0.0.10', '10.0.0.9', '10.0.0.100'],
      expected: ['10.0.0.9', '10.0.0.10', '10.0.0.100'],
    },
    {
      name: 'IPv4 before IPv6 before text',
      texts: ['zz', 'fd00::1', '255.255.255.255', 'aa'],
      expected: ['255.255.255.255', 'fd00::1', 'aa', 'zz'],
    },
    {
      name: 'the top of IPv4 and of IPv6',
      texts: ['ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '::', '255.255.255.255', '0.0.0.0'],
      expected: ['0.0.0.0', '255.255.255.255', '::', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
    },
    { name: 'nothing', texts: [], expected: [] },
  ];
  for (const row of table) {
    void it(row.name, () => {
      assert.deepEqual(sortIps(row.texts), row.expected);
    });
  }
});
