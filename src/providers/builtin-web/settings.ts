import type { Env } from '../../core/config';

/** What the built-in web provider reads from the installation's settings. */
export interface BuiltinWebSettings {
  /** DNS-over-HTTPS JSON endpoint every host name is checked with before it is fetched. */
  dnsUrl: string;
  /** `host:port` pairs (lower case, IPv6 in brackets) that may be fetched although they are private. */
  allowedPrivateHosts: ReadonlySet<string>;
  /** The setting those pairs come from, named when a private address is refused. */
  allowanceSetting: PrivateHostsSetting;
  userAgent: string;
  mobileUserAgent: string;
}

export const DEFAULT_DNS_URL = 'https://cloudflare-dns.com/dns-query';

/** The crawler's name: what robots.txt groups are matched against. */
export const CRAWLER_TOKEN = 'SluiceBot';

/**
 * Each purpose has its own allow-list, so a local scrape allowance never widens where events may be sent or
 * whose documents the authorization server reads: the scraper's for pages, webhooks' for event deliveries, OAuth's
 * for client ID metadata documents.
 */
export type PrivateHostsSetting = 'SCRAPE_ALLOW_PRIVATE_HOSTS' | 'WEBHOOK_ALLOW_PRIVATE_HOSTS' | 'OAUTH_CLIENT_ALLOW_PRIVATE_HOSTS';

export function builtinWebSettings(env: Env, allowanceSetting: PrivateHostsSetting = 'SCRAPE_ALLOW_PRIVATE_HOSTS'): BuiltinWebSettings {
  // Read by name: these settings join the SETTINGS list when the provider is wired in.
  const values = env as unknown as Partial<Record<string, string>>;
  const infoUrl = values.SCRAPE_CRAWLER_INFO_URL || `${(values.BASE_URL ?? '').replace(/\/+$/, '')}/docs`;
  const identity = `compatible; ${CRAWLER_TOKEN}/1.0; +${infoUrl}`;
  return {
    dnsUrl: values.SCRAPE_DNS_URL || DEFAULT_DNS_URL,
    allowedPrivateHosts: parseAllowedHosts(values[allowanceSetting]),
    allowanceSetting,
    userAgent: `Mozilla/5.0 (${identity})`,
    // Sites choose their mobile layout from "Mobile" and a handset platform in the agent string.
    mobileUserAgent: `Mozilla/5.0 (Linux; Android 14; Mobile; ${identity}) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36`,
  };
}

/**
 * `host:port,host:port`, each host spelled as the URL parser would (so `127.1:8080` means 127.0.0.1:8080).
 * Entries without a port are ignored: only exact host:port pairs are ever allowed.
 */
export function parseAllowedHosts(value: string | undefined): ReadonlySet<string> {
  const allowed = new Set<string>();
  for (const entry of (value ?? '').split(',')) {
    const match = /^(.+):(\d{1,5})$/.exec(entry.trim());
    if (!match) continue;
    try {
      allowed.add(`${new URL(`http://${match[1]}`).hostname.replace(/\.$/, '')}:${Number(match[2])}`);
    } catch {
      // Not a host: nothing to allow.
    }
  }
  return allowed;
}

/** The allow-list key of a URL: its host as the URL parser spells it, and its port or the scheme's default. */
export function hostPortOf(url: URL): string {
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return `${url.hostname.replace(/\.$/, '')}:${port}`;
}
