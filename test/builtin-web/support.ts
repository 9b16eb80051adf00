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
    allowanceSetting: 'SCRAPE_ALLOW_PRIVATE_HOSTS',
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

/** A page served in 1 KB pieces, each only when pulled, counting what was pulled and whether the reader hung up. */
export function streamedPage(html: string) {
  const bytes = new TextEncoder().encode(html);
  const served = { bytes: 0, total: bytes.byteLength, cancelled: false };
  const response = () =>
    new Response(
      new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            if (served.bytes >= bytes.byteLength) return controller.close();
            const piece = bytes.slice(served.bytes, served.bytes + 1024);
            served.bytes += piece.byteLength;
            controller.enqueue(piece);
          },
          cancel() {
            served.cancelled = true;
          },
        },
        { highWaterMark: 0 },
      ),
      { headers: { 'content-type': 'text/html; charset=utf-8' } },
    );
  return { served, response };
}
