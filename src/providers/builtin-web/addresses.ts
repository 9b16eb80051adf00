import ipaddr from 'ipaddr.js';

/**
 * Which addresses and host names the built-in web provider may reach: public unicast only.
 * The policy is these tables; everything else in this file applies them.
 */

type Block = readonly [cidr: string, why: string];

/** IPv4 blocks that are not the public internet (IANA special-purpose registry, RFC 6890 and after). */
const NON_PUBLIC_IPV4: readonly Block[] = [
  ['0.0.0.0/8', 'a "this network" address'],
  ['10.0.0.0/8', 'a private address'],
  ['100.64.0.0/10', 'a carrier-grade NAT address'],
  ['127.0.0.0/8', 'a loopback address'],
  ['169.254.0.0/16', 'a link-local address (where cloud metadata services live)'],
  ['172.16.0.0/12', 'a private address'],
  ['192.0.0.0/24', 'an IETF protocol address'],
  ['192.0.2.0/24', 'a documentation address'],
  ['192.88.99.0/24', 'a 6to4 relay address'],
  ['192.168.0.0/16', 'a private address'],
  ['198.18.0.0/15', 'a benchmarking address'],
  ['198.51.100.0/24', 'a documentation address'],
  ['203.0.113.0/24', 'a documentation address'],
  ['224.0.0.0/4', 'a multicast address'],
  ['240.0.0.0/4', 'a reserved or broadcast address'],
];

/** IPv6 blocks that embed an IPv4 address: they are as public as the address they carry. */
const IPV4_CARRYING_IPV6: readonly (readonly [cidr: string, embedded: (address: ipaddr.IPv6) => ipaddr.IPv4])[] = [
  ['::ffff:0:0/96', (address) => fromLowBits(address)],
  ['64:ff9b::/96', (address) => fromLowBits(address)],
  ['2002::/16', (address) => new ipaddr.IPv4(bytesOf(address).slice(2, 6))],
];

/** IPv6 blocks inside global unicast (2000::/3) that still are not the public internet. */
const NON_PUBLIC_IPV6: readonly Block[] = [
  ['2001::/32', 'a Teredo tunnel address'],
  ['2001:2::/48', 'a benchmarking address'],
  ['2001:10::/28', 'an ORCHID address'],
  ['2001:20::/28', 'an ORCHIDv2 address'],
  ['2001:db8::/32', 'a documentation address'],
  ['3fff::/20', 'a documentation address'],
];

/** Everything outside 2000::/3 is refused; these say why for the blocks a caller is likely to try. */
const NAMED_IPV6: readonly Block[] = [
  ['::/128', 'the unspecified address'],
  ['::1/128', 'a loopback address'],
  ['64:ff9b:1::/48', 'a local-use NAT64 address'],
  ['100::/64', 'a discard-only address'],
  ['fc00::/7', 'a unique local (private) address'],
  ['fe80::/10', 'a link-local address'],
  ['fec0::/10', 'a site-local address'],
  ['ff00::/8', 'a multicast address'],
];

const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');

/** Suffixes of names that only mean something inside a private network (RFC 6761, 6762, 8375; ICANN's .internal). */
const PRIVATE_NAME_SUFFIXES = ['localhost', 'local', 'localdomain', 'internal', 'intranet', 'lan', 'home', 'corp', 'private', 'home.arpa'];

/** Cloud metadata names not already covered by a private suffix. */
const METADATA_NAMES = new Set(['metadata.goog', 'metadata.azure.com', 'metadata.tencentyun.com']);

/** Why an IP address may not be fetched, or undefined when it is public. Accepts IPv6 with or without brackets. */
export function nonPublicAddressReason(text: string): string | undefined {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  let address: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    address = ipaddr.parse(bare);
  } catch {
    return 'not an IP address';
  }
  return address.kind() === 'ipv4' ? ipv4Reason(address as ipaddr.IPv4) : ipv6Reason(address as ipaddr.IPv6);
}

function ipv4Reason(address: ipaddr.IPv4): string | undefined {
  return NON_PUBLIC_IPV4.find(([cidr]) => address.match(ipaddr.IPv4.parseCIDR(cidr)))?.[1];
}

function ipv6Reason(address: ipaddr.IPv6): string | undefined {
  if (address.zoneId) return 'a scoped (zone) address';
  for (const [cidr, embedded] of IPV4_CARRYING_IPV6) {
    if (!address.match(ipaddr.IPv6.parseCIDR(cidr))) continue;
    const carried = ipv4Reason(embedded(address));
    return carried ? `${carried}, carried in IPv6` : undefined;
  }
  const named = [...NAMED_IPV6, ...NON_PUBLIC_IPV6].find(([cidr]) => address.match(ipaddr.IPv6.parseCIDR(cidr)));
  if (named) return named[1];
  if (!address.match(GLOBAL_UNICAST)) return 'not a global unicast address';
  return undefined;
}

/** Whether a URL host is an IP literal (the URL parser has already turned 0x7f.1 and 2130706433 into dotted form). */
export function isIpLiteral(hostname: string): boolean {
  return hostname.startsWith('[') || ipaddr.IPv4.isValidFourPartDecimal(hostname);
}

/** Why a host name (not an IP literal) may not be fetched before it is even resolved, or undefined. */
export function privateNameReason(hostname: string): string | undefined {
  const name = hostname.replace(/\.$/, '').toLowerCase();
  if (METADATA_NAMES.has(name)) return 'a cloud metadata service';
  const suffix = PRIVATE_NAME_SUFFIXES.find((ending) => name === ending || name.endsWith(`.${ending}`));
  if (suffix) return `a .${suffix} name, which only resolves inside a private network`;
  if (!name.includes('.')) return 'a single-label name, which only resolves inside a private network';
  return undefined;
}

/** A DNS answer's address, parsed strictly: resolvers answer canonical forms, anything else is suspect. */
export function isCanonicalAddress(text: string, type: 'A' | 'AAAA'): boolean {
  return type === 'A' ? ipaddr.IPv4.isValidFourPartDecimal(text) : ipaddr.IPv6.isValid(text) && !text.includes('%');
}

function bytesOf(address: ipaddr.IPv6): number[] {
  return address.toByteArray();
}

function fromLowBits(address: ipaddr.IPv6): ipaddr.IPv4 {
  return new ipaddr.IPv4(bytesOf(address).slice(12, 16));
}
