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

/** A PDF of `count` pages, page n reading "Page n of count.", with a correct cross-reference table. */
export function pdfOfPages(count: number): Uint8Array {
  const font = 3 + count * 2;
  const objects = ['<< /Type /Catalog /Pages 2 0 R >>', `<< /Type /Pages /Kids [${Array.from({ length: count }, (_, page) => `${3 + page * 2} 0 R`).join(' ')}] /Count ${count} >>`];
  for (let page = 0; page < count; page++) {
    const content = `BT /F1 14 Tf 72 720 Td (Page ${page + 1} of ${count}.) Tj ET`;
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 ${font} 0 R >> >> /Contents ${4 + page * 2} 0 R >>`);
    objects.push(`<< /Length ${content.length} >>\nstream\n${content}\nendstream`);
  }
  objects.push('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  let text = '%PDF-1.4\n';
  const offsets = objects.map((object, index) => {
    const at = text.length;
    text += `${index + 1} 0 obj\n${object}\nendobj\n`;
    return at;
  });
  const xref = text.length;
  text += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((at) => `${String(at).padStart(10, '0')} 00000 n \n`).join('')}`;
  text += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return new TextEncoder().encode(text);
}
