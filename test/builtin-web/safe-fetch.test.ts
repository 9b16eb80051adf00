import { describe, expect, it } from 'vitest';
import { MIN_INFLATED_BYTES, SafeFetcher } from '../../src/providers/builtin-web/safe-fetch';
import { parseAllowedHosts } from '../../src/providers/builtin-web/settings';
import { FAKE_DNS_URL } from '../fakes/web-sites';
import { settings, signal, streamedPage, web } from './support';

function fetcherFor(options: { allow?: string; dnsUrl?: string; signal?: AbortSignal } = {}) {
  const site = web();
  const fetcher = new SafeFetcher({
    settings: { ...settings({ allow: options.allow }), ...(options.dnsUrl ? { dnsUrl: options.dnsUrl } : {}) },
    signal: options.signal ?? signal(),
    fetch: site.fetch,
  });
  return { site, fetcher };
}

const refusedOnUrl = (message: RegExp | string) => ({
  code: 'VALIDATION_ERROR',
  status: 400,
  details: [{ field: 'url', location: 'body', message: typeof message === 'string' ? expect.stringContaining(message) : expect.stringMatching(message) }],
});

describe('refuses every target that is not a public http(s) address, with 400 VALIDATION_ERROR on url', () => {
  it.each([
    ['http://127.0.0.1/', 'loopback'],
    ['http://127.1/', 'loopback'],
    ['http://2130706433/', 'loopback'],
    ['http://0x7f.1/', 'loopback'],
    ['http://0x7f000001/', 'loopback'],
    ['http://0177.0.0.1/', 'loopback'],
    ['http://127.0.0.1.:8080/', 'loopback'],
    ['http://10.0.0.5/', 'private'],
    ['http://172.16.4.2/', 'private'],
    ['http://172.31.255.254/', 'private'],
    ['http://192.168.1.1/', 'private'],
    ['http://100.64.0.1/', 'carrier-grade NAT'],
    ['http://169.254.169.254/latest/meta-data/', 'link-local'],
    ['http://0.0.0.0/', 'this network'],
    ['http://224.0.0.1/', 'multicast'],
    ['http://255.255.255.255/', 'broadcast'],
    ['http://198.18.0.1/', 'benchmarking'],
    ['http://192.0.0.192/', 'IETF protocol'],
    ['http://[::1]/', 'loopback'],
    ['http://[::]/', 'unspecified'],
    ['http://[fc00::1]/', 'unique local'],
    ['http://[fd00:ec2::254]/', 'unique local'],
    ['http://[fe80::1]/', 'link-local'],
    ['http://[ff02::1]/', 'multicast'],
    ['http://[::ffff:127.0.0.1]/', 'loopback address, carried in IPv6'],
    ['http://[::ffff:a00:1]/', 'private address, carried in IPv6'],
    ['http://[64:ff9b::a00:1]/', 'private address, carried in IPv6'],
    ['http://[2002:c0a8:101::1]/', 'private address, carried in IPv6'],
    ['http://[2001:db8::1]/', 'documentation'],
    ['http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', 'Teredo'],
    ['http://[::127.0.0.1]/', 'not a global unicast'],
    ['http://localhost/', '.localhost name'],
    ['http://LOCALHOST./', '.localhost name'],
    ['http://app.localhost:3000/', '.localhost name'],
    ['http://metadata.google.internal/computeMetadata/v1/', '.internal name'],
    ['http://printer.local/', '.local name'],
    ['http://router.home.arpa/', '.home.arpa name'],
    ['http://fileserver/', 'single-label'],
    ['http://metadata.goog/', 'cloud metadata'],
    ['ftp://news.example.com/file', 'not an http(s) URL'],
    ['file:///etc/passwd', 'not an http(s) URL'],
    ['http://user:secret@news.example.com/', 'user name or password'],
  ])('%s (%s)', async (url, reason) => {
    const { site, fetcher } = fetcherFor();
    await expect(fetcher.fetch(url)).rejects.toMatchObject(refusedOnUrl(reason));
    // Refused before anything left: no request to the target, and private names never reach the resolver.
    expect(site.requests).toEqual([]);
  });

  it.each([
    ['private.example.com', '10.1.2.3, a private address'],
    ['loopback.example.com', '127.0.0.1, a loopback address'],
    ['mixed.example.com', '192.168.1.10, a private address'],
    ['metadata.example.com', '169.254.169.254, a link-local address'],
    ['cgnat.example.com', '100.100.100.200, a carrier-grade NAT address'],
    ['zero.example.com', '0.0.0.0, a "this network" address'],
    ['multicast.example.com', '239.1.2.3, a multicast address'],
    ['ula.example.com', 'fd00:ec2::254, a unique local'],
    ['linklocal6.example.com', 'fe80::1, a link-local address'],
    ['loopback6.example.com', '::1, a loopback address'],
    ['mapped.example.com', '::ffff:10.0.0.1, a private address, carried in IPv6'],
    ['nat64.example.com', '64:ff9b::a00:1, a private address, carried in IPv6'],
    ['sixtofour.example.com', '2002:c0a8:101::1, a private address, carried in IPv6'],
    ['cname-private.example.com', '10.9.9.9, a private address'],
  ])('a name resolving to a non-public address: %s', async (host, reason) => {
    const { site, fetcher } = fetcherFor();
    await expect(fetcher.fetch(`https://${host}/`)).rejects.toMatchObject(refusedOnUrl(`resolves to ${reason}`));
    expect(site.requests.every((url) => url.startsWith('https://dns.fake/'))).toBe(true);
  });

  it.each([
    ['/to-private', 'http://10.0.0.5/admin, which is a private address'],
    ['/to-metadata', 'http://169.254.169.254/latest/meta-data/, which is a link-local address'],
    ['/to-loopback-v6', 'http://[::1]/, which is a loopback address'],
    ['/to-private-name', 'https://private.example.com/, which is a name that resolves to 10.1.2.3'],
    ['/to-localhost', 'http://localhost/, which is a .localhost name'],
    ['/to-decimal', 'http://127.0.0.1/, which is a loopback address'],
    ['/to-file', 'file:///etc/passwd, which is not an http(s) URL'],
  ])('a redirect into private space: %s', async (path, reason) => {
    const { site, fetcher } = fetcherFor();
    await expect(fetcher.fetch(`https://news.example.com${path}`)).rejects.toMatchObject(refusedOnUrl(`https://news.example.com${path} redirects to ${reason}`));
    expect(site.requests.filter((url) => !url.startsWith('https://dns.fake/'))).toEqual([`https://news.example.com${path}`]);
  });
});

describe('fetches public targets', () => {
  it('fetches a public name, sending the Sluice user agent', async () => {
    const { fetcher } = fetcherFor();
    const page = await fetcher.fetch('https://news.example.com/echo', { headers: { 'user-agent': settings().userAgent } });
    expect(page.status).toBe(200);
    expect(page.contentType).toBe('text/html');
    expect(new TextDecoder().decode(page.body)).toContain('SluiceBot/1.0');
  });

  it.each(['v6only.example.com', 'nat64-public.example.com'])('accepts a public IPv6 answer: %s', async (host) => {
    const { fetcher } = fetcherFor();
    expect((await fetcher.fetch(`https://${host}/`)).status).toBe(200);
  });

  it('accepts a public IP literal without asking the resolver', async () => {
    const { site, fetcher } = fetcherFor();
    await expect(fetcher.assertPublic(new URL('http://93.184.215.14/'))).resolves.toBeUndefined();
    await expect(fetcher.assertPublic(new URL('http://[2606:4700:4700::1111]/'))).resolves.toBeUndefined();
    expect(site.requests).toEqual([]);
  });

  it('follows up to 5 redirects and reports the final URL', async () => {
    const { fetcher } = fetcherFor();
    const page = await fetcher.fetch('https://news.example.com/hops/5');
    expect(page).toMatchObject({ status: 200, requestedUrl: 'https://news.example.com/hops/5', url: 'https://news.example.com/hops/0' });
  });

  it('resolves each name once per call', async () => {
    const { site, fetcher } = fetcherFor();
    await fetcher.fetch('https://news.example.com/hops/3');
    expect(site.requests.filter((url) => url.startsWith('https://dns.fake/'))).toHaveLength(2);
  });
});

describe('fails what cannot be fetched safely, uncharged', () => {
  it.each(['/hops/6', '/loop'])('refuses a sixth redirect (%s) with 422 PROVIDER_ERROR', async (path) => {
    const { fetcher } = fetcherFor();
    await expect(fetcher.fetch(`https://news.example.com${path}`)).rejects.toMatchObject({ code: 'PROVIDER_ERROR', status: 422, message: expect.stringContaining('redirects more than 5 times') });
  });

  it('abandons a body past 10 MB while it streams, with 422 PROVIDER_ERROR', async () => {
    const { fetcher } = fetcherFor();
    await expect(fetcher.fetch('https://news.example.com/huge')).rejects.toMatchObject({ code: 'PROVIDER_ERROR', status: 422, message: expect.stringContaining('larger than 10 MB') });
  });

  it('abandons a compression bomb once it inflates past 100 times its compressed length, long before the 10 MB cap', async () => {
    const { site, fetcher } = fetcherFor();
    // As workerd's fetch hands it over: decompressed, with the compressed Content-Length and the encoding kept.
    const page = streamedPage(`<html><body>${'a'.repeat(10 * 1024 * 1024)}</body></html>`);
    const compressed = new Response(page.response().body, { headers: { 'content-type': 'text/html', 'content-encoding': 'gzip', 'content-length': String(10 * 1024) } });
    site.setResponse('https://news.example.com/bomb', () => compressed);
    await expect(fetcher.fetch('https://news.example.com/bomb')).rejects.toMatchObject({ code: 'PROVIDER_ERROR', status: 422, message: expect.stringContaining('a compression bomb') });
    expect(page.served.cancelled).toBe(true);
    expect(page.served.bytes).toBeLessThan(MIN_INFLATED_BYTES + 64 * 1024);
  });

  it('reads a compressed page that inflates as pages do', async () => {
    const { site, fetcher } = fetcherFor();
    const html = `<html><body>${'<p>An ordinary paragraph of an ordinary page.</p>'.repeat(40_000)}</body></html>`;
    site.setResponse('https://news.example.com/zipped', () => new Response(html, { headers: { 'content-type': 'text/html', 'content-encoding': 'gzip', 'content-length': String(Math.ceil(html.length / 20)) } }));
    expect((await fetcher.fetch('https://news.example.com/zipped')).status).toBe(200);
  });

  it('gives up when the call runs out of time, with 502 PROVIDER_ERROR', async () => {
    const { fetcher } = fetcherFor({ signal: AbortSignal.timeout(50) });
    await expect(fetcher.fetch('https://news.example.com/slow')).rejects.toMatchObject({ code: 'PROVIDER_ERROR', status: 502, message: expect.stringContaining('timed out') });
  });

  it.each([
    ['no such name', 'nowhere.example.com', 'the name has no address'],
    ['a resolver SERVFAIL', 'servfail.example.com', 'DNS status 2'],
    ['a malformed answer', 'malformed.example.com', 'malformed A record'],
  ])('fails closed on %s with 502 PROVIDER_ERROR', async (_, host, reason) => {
    const { site, fetcher } = fetcherFor();
    await expect(fetcher.fetch(`https://${host}/`)).rejects.toMatchObject({ code: 'PROVIDER_ERROR', status: 502, message: expect.stringContaining(reason) });
    expect(site.requests.every((url) => url.startsWith('https://dns.fake/'))).toBe(true);
  });

  it('fails closed on a resolver HTTP error with 503 PROVIDER_UNAVAILABLE: the resolver is ours, not the page', async () => {
    const { site, fetcher } = fetcherFor();
    await expect(fetcher.fetch('https://resolver-error.example.com/')).rejects.toMatchObject({ code: 'PROVIDER_UNAVAILABLE', status: 503, message: expect.stringContaining('HTTP 500') });
    expect(site.requests.every((url) => url.startsWith('https://dns.fake/'))).toBe(true);
  });

  it("says a connection that could not be made in words, not as workerd's 'internal error; reference = …'", async () => {
    const site = web();
    const fetcher = new SafeFetcher({
      settings: settings(),
      signal: signal(),
      // The resolver answers; the page's own connection fails as workerd reports a refused one.
      fetch: (input, init) => (String(input).startsWith(FAKE_DNS_URL) ? site.fetch(input, init) : Promise.reject(new Error('internal error; reference = 1jr8q0c5v0e2'))),
    });
    const refusal = fetcher.fetch('https://news.example.com/2026/harbour-dredging');
    await expect(refusal).rejects.toMatchObject({ code: 'PROVIDER_ERROR', status: 502, message: expect.stringContaining('network error (no connection could be made)') });
    await expect(refusal).rejects.toMatchObject({ message: expect.not.stringContaining('reference') });
  });

  it('fails closed when the resolver cannot be reached: 503 PROVIDER_UNAVAILABLE, our own dependency, with a wait', async () => {
    const { site, fetcher } = fetcherFor({ dnsUrl: 'https://unreachable-resolver.fake/dns-query' });
    const refusal = fetcher.fetch('https://news.example.com/2026/harbour-dredging');
    await expect(refusal).rejects.toMatchObject({ code: 'PROVIDER_UNAVAILABLE', status: 503, retryAfter: 30 });
    await expect(refusal).rejects.toMatchObject({ message: expect.not.stringContaining('charged') });
    expect(site.requests.some((url) => url.startsWith('https://news.example.com/'))).toBe(false);
  });
});

describe('SCRAPE_ALLOW_PRIVATE_HOSTS', () => {
  it('reads exact host:port pairs, spelled as the URL parser spells them, and ignores entries without a port', () => {
    expect([...parseAllowedHosts(' LocalHost:8080, 127.1:9000,[::1]:80, intranet.corp , 10.0.0.5:80,')]).toEqual([
      'localhost:8080',
      '127.0.0.1:9000',
      '[::1]:80',
      '10.0.0.5:80',
    ]);
    expect(parseAllowedHosts(undefined).size).toBe(0);
    expect(parseAllowedHosts('').size).toBe(0);
  });

  it.each([
    ['http://localhost:8080/', 'localhost:8080'],
    ['http://10.0.0.5/', '10.0.0.5:80'],
    ['http://127.0.0.1:9000/', '127.1:9000'],
    ['http://[::1]/', '[::1]:80'],
    ['http://intranet.corp:8443/', 'intranet.corp:8443'],
  ])('fetches %s when %s is allowed', async (url, allow) => {
    const { fetcher } = fetcherFor({ allow });
    expect((await fetcher.fetch(url)).status).toBe(200);
  });

  it.each([
    ['http://localhost:8081/', 'localhost:8080'],
    ['https://10.0.0.5/', '10.0.0.5:80'],
    ['http://10.0.0.6/', '10.0.0.5:80'],
    ['http://localhost/', 'localhost'],
  ])('still refuses %s when only %s is allowed', async (url, allow) => {
    const { fetcher } = fetcherFor({ allow });
    await expect(fetcher.fetch(url)).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
  });

  it('names itself when it refuses a private address, so the operator of a local stack knows what to set', async () => {
    const { fetcher } = fetcherFor({});
    await expect(fetcher.fetch('http://localhost:3000/')).rejects.toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringContaining('SCRAPE_ALLOW_PRIVATE_HOSTS') });
    // A scheme or a password is never allowed, so no setting is named for them.
    await expect(fetcher.fetch('ftp://example.com/')).rejects.toMatchObject({ message: expect.not.stringContaining('ALLOW_PRIVATE_HOSTS') });
  });

  it('lets a redirect reach an allowed private host, and no other', async () => {
    const allowed = fetcherFor({ allow: '10.0.0.5:80' });
    expect((await allowed.fetcher.fetch('https://news.example.com/to-private')).url).toBe('http://10.0.0.5/admin');
    await expect(allowed.fetcher.fetch('https://news.example.com/to-metadata')).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
  });
});
