import { readFileSync } from 'node:fs';
import { dataforseoUpstream, FAKE_DATAFORSEO } from './dataforseo.ts';
import { FAKE_FIRECRAWL, firecrawlUpstream } from './firecrawl.ts';
import { FAKE_LINKEDIN, linkedinUpstream } from './linkedin-upstream.ts';
import { FAKE_VENDOR_HOST, FAKE_VENDOR_SETTINGS, vendorsUpstream } from './vendors.ts';
import { FAKE_RESEND, resendUpstream } from './resend.ts';
import { FAKE_STRIPE, stripeUpstream } from './stripe.ts';
import { FAKE_DNS_URL, FAKE_WEB_HOSTS, fakeWeb } from './web-sites.ts';
import { FAKE_RECEIVER_HOST, webhookReceiver } from './webhook-receiver.ts';

const page = (name: string) => readFileSync(new URL(`../fixtures/pages/${name}`, import.meta.url));
/** Public-looking sites and a DNS-over-HTTPS resolver, for the built-in web provider. */
const fakeWebSites = fakeWeb({
  article: page('article.html').toString('utf8'),
  docs: page('docs.html').toString('utf8'),
  gallery: page('gallery.html').toString('utf8'),
  pdf: Uint8Array.from(page('harbour-report.pdf')),
});

/** Settings that point the worker under test at the fakes. */
export const FAKE_SETTINGS = {
  ...FAKE_VENDOR_SETTINGS,
  LINKEDIN_API_KEY: FAKE_LINKEDIN.key,
  LINKEDIN_API_HOST: FAKE_LINKEDIN.host,
  LINKEDIN_BASE_URL: FAKE_LINKEDIN.baseUrl,
  DATAFORSEO_LOGIN: FAKE_DATAFORSEO.login,
  DATAFORSEO_PASSWORD: FAKE_DATAFORSEO.password,
  DATAFORSEO_BASE_URL: FAKE_DATAFORSEO.baseUrl,
  FIRECRAWL_API_KEY: FAKE_FIRECRAWL.key,
  FIRECRAWL_BASE_URL: FAKE_FIRECRAWL.baseUrl,
  SCRAPE_DNS_URL: FAKE_DNS_URL,
};

const BY_HOST: Record<string, (request: Request) => Promise<Response>> = {
  [new URL(FAKE_LINKEDIN.baseUrl).hostname]: linkedinUpstream,
  [new URL(FAKE_DATAFORSEO.baseUrl).hostname]: dataforseoUpstream,
  [new URL(FAKE_FIRECRAWL.baseUrl).hostname]: firecrawlUpstream,
  [FAKE_VENDOR_HOST]: vendorsUpstream,
  [new URL(FAKE_RESEND.baseUrl).hostname]: resendUpstream,
  [new URL(FAKE_STRIPE.baseUrl).hostname]: stripeUpstream,
  ...Object.fromEntries(FAKE_WEB_HOSTS.map((host) => [host, fakeWebSites.handle])),
  [FAKE_RECEIVER_HOST]: webhookReceiver,
};

/** Outbound interception: every fetch the worker makes lands in a fake, never on the internet. */
export async function fakeUpstreams(request: Request): Promise<Response> {
  const { hostname } = new URL(request.url);
  const fake = BY_HOST[hostname];
  return fake ? fake(request) : new Response(`no fake upstream for ${hostname}`, { status: 599 });
}
