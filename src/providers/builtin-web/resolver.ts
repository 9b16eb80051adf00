import { normalizeUpstream } from '../normalize';
import { isCanonicalAddress } from './addresses';

/** The fetch the provider goes out with; tests hand in their fake sites. */
export type Fetcher = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

interface DnsJsonAnswer {
  Status?: unknown;
  Answer?: { type?: unknown; data?: unknown }[];
}

const RECORD_TYPES = { A: 1, AAAA: 28 } as const;
const NO_SUCH_NAME = 3;

/** What the resolver is called when it is the one that failed: this installation's own dependency. */
const RESOLVER = 'The DNS resolver this server checks every host name with';

/**
 * Resolves a host name to every A and AAAA address through a DNS-over-HTTPS JSON resolver.
 * Fails closed: a resolver that cannot be reached or does not speak DNS JSON fails the fetch with 503
 * PROVIDER_UNAVAILABLE (our dependency is down); a DNS failure of the name itself (a status other than
 * success or "no such name", or no address at all) is the target's, 502.
 */
export async function resolveHost(hostname: string, dnsUrl: string, fetcher: Fetcher, signal: AbortSignal): Promise<string[]> {
  const name = hostname.replace(/\.$/, '');
  const [v4, v6] = await Promise.all([query(name, 'A', dnsUrl, fetcher, signal), query(name, 'AAAA', dnsUrl, fetcher, signal)]);
  const addresses = [...v4, ...v6];
  if (addresses.length === 0) throw normalizeUpstream.failed(`Resolving ${name}`, 'the name has no address');
  return addresses;
}

async function query(name: string, type: keyof typeof RECORD_TYPES, dnsUrl: string, fetcher: Fetcher, signal: AbortSignal): Promise<string[]> {
  const label = `Resolving ${name}`;
  const url = new URL(dnsUrl);
  url.searchParams.set('name', name);
  url.searchParams.set('type', type);
  let response: Response;
  try {
    response = await fetcher(url, { headers: { accept: 'application/dns-json' }, signal });
  } catch (error) {
    if (signal.aborted) throw normalizeUpstream.failed(label, 'timed out');
    throw normalizeUpstream.dependencyUnreachable(RESOLVER, error instanceof Error ? error.message : String(error));
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw normalizeUpstream.dependencyUnreachable(RESOLVER, `it answered HTTP ${response.status}`);
  }
  let answer: DnsJsonAnswer;
  try {
    answer = (await response.json()) as DnsJsonAnswer;
  } catch {
    if (signal.aborted) throw normalizeUpstream.failed(label, 'timed out');
    throw normalizeUpstream.dependencyUnreachable(RESOLVER, 'it answered something that is not DNS JSON');
  }
  if (answer.Status === NO_SUCH_NAME) return [];
  if (answer.Status !== 0) throw normalizeUpstream.failed(label, `the resolver answered DNS status ${String(answer.Status)}`);

  const addresses: string[] = [];
  for (const record of answer.Answer ?? []) {
    // CNAME and other records on the way are skipped; only the addresses at the end of the chain count.
    if (record.type !== RECORD_TYPES[type]) continue;
    if (typeof record.data !== 'string' || !isCanonicalAddress(record.data, type)) {
      throw normalizeUpstream.failed(label, `the resolver answered a malformed ${type} record`);
    }
    addresses.push(record.data);
  }
  return addresses;
}
