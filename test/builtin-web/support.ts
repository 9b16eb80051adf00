import { env } from 'cloudflare:workers';
import type { Env } from '../../src/core/config';
import article from '../fixtures/pages/article.html?raw';
import docs from '../fixtures/pages/docs.html?raw';
import gallery from '../fixtures/pages/gallery.html?raw';
import pdf from '../fixtures/pages/harbour-report.pdf?raw';
import { FAKE_DNS_URL, fakeWeb, type FakeWeb } from '../fakes/web-sites';
import { parseAllowedHosts, type BuiltinWebSettings } from '../../src/providers/builtin-web/settings';

/** The fake public web, serving the saved pages (the PDF fixture is plain ASCII, so its text is its bytes). */
export function web(): FakeWeb {
  return fakeWeb({ article, docs, gallery, pdf: new TextEncoder().encode(pdf) });
}

export function settings(options: { allow?: string } = {}): BuiltinWebSettings {
  return {
    dnsUrl: FAKE_DNS_URL,
    allowedPrivateHosts: parseAllowedHosts(options.allow),
    userAgent: 'Mozilla/5.0 (compatible; SluiceBot/1.0; +https://sluice.test/docs)',
    mobileUserAgent: 'Mozilla/5.0 (Linux; Android 14; Mobile; compatible; SluiceBot/1.0; +https://sluice.test/docs) Mobile Safari/537.36',
  };
}

/** A signal that gives a test's call 10 seconds, like the pipeline's time limit would. */
export function signal(ms = 10_000): AbortSignal {
  return AbortSignal.timeout(ms);
}

/** The worker's settings, with the resolver pointed at the fake one. */
export function webEnv(extra: Record<string, string | undefined> = {}): Env {
  return { ...env, SCRAPE_DNS_URL: FAKE_DNS_URL, FIRECRAWL_API_KEY: undefined, ...extra } as Env;
}
