import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { buildApiApp } from '../../src/api';
import type { Env } from '../../src/core/config';
import type { RenderedPage, Renderer, RenderOptions } from '../../src/core/render';
import { ApiError } from '../../src/core/errors';
import { auditWithBuiltin } from '../../src/providers/builtin-web/onpage-audit';
import { receivedBy } from '../fakes/dataforseo';
import { FAKE_DNS_URL } from '../fakes/web-sites';
import { signal, web, webEnv } from '../builtin-web/support';
import { funded, json, tool, wallet } from '../support/api';

const unique = () => crypto.randomUUID().slice(0, 8);

type Item = { checks: Record<string, boolean>; meta: Record<string, any>; onpage_score: number; page_timing: { waiting_time: number; duration_time: number }; [field: string]: any };

const WORDS = 'Ferries leave the north pier every forty minutes from six in the morning until midnight.';
const AUDITED = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Harbour ferries, fares and timetables</title>
<meta name="description" content="When the island ferries leave and what a crossing costs.">
<meta name="robots" content="noindex, nofollow">
<link rel="canonical" href="/ferries"><link rel="icon" href="/favicon.ico"><link rel="stylesheet" href="/site.css">
<script src="/app.js"></script><script async src="/stats.js"></script></head>
<body><h1>Ferries</h1><h2>Fares</h2><h2>Timetable</h2><p>${WORDS}</p>
<img src="/a.png" alt="A ferry at the pier"><img src="/b.png"><img src="/c.png" alt=" ">
<a href="/fares">Fares</a><a href="http://shop.example.net/old">Old timetable</a><a href="https://other.example.org/">Tourist office</a>
</body></html>`;

async function audit(html: string, options: { status?: number; url?: string; renderer?: Renderer } = {}): Promise<Item> {
  const site = web();
  const url = options.url ?? `https://shop.example.net/ferries-${unique()}`;
  site.setPage(url, html, options.status);
  const result = await auditWithBuiltin({ url, ...(options.renderer ? { enableJavascript: true } : {}) }, { env: webEnv(), signal: signal(), fetch: site.fetch, ...(options.renderer ? { renderer: options.renderer } : {}) });
  const answer = (result.data as { result: { items: Item[]; items_count: number }[] }).result[0]!;
  expect(answer.items_count).toBe(1);
  return answer.items[0]!;
}

/** A tool call with some settings changed, as an installation without DataForSEO would answer it. */
async function callWith(settings: Partial<Env>, key: string, path: string, body: unknown): Promise<Response> {
  return await buildApiApp().fetch(
    new Request(`http://sluice.test${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    { ...env, ...settings },
    createExecutionContext(),
  );
}

describe('POST /onpage-audit over DataForSEO On-Page instant_pages', () => {
  it.each(['/onpage-audit', '/v1/data/seo/onpage-audit'])('answers the page with its score, checks, meta and timing at %s; 0.2 cents', async (path) => {
    const account = await funded(100, 'payg');
    const url = `https://${unique()}.example.com/`;
    const body = await json(await tool(account.key, path, { url }));
    const item = body.data.result[0].items[0];
    expect(item).toMatchObject({ url, status_code: 200, onpage_score: expect.any(Number), meta: { title: 'Example Domain', htags: { h1: ['Example Domain'] } } });
    expect(item.checks).toMatchObject({ no_title: false, no_description: true, no_image_alt: false });
    expect(item.page_timing.duration_time).toEqual(expect.any(Number));
    expect(body.meta.costCents).toBe(0.2);
    expect((await receivedBy('/v3/on_page/instant_pages', url)).last?.task).toEqual({ url });
  });

  it('sends enable_javascript when enableJavascript is asked for, and charges 0.5 cents', async () => {
    const account = await funded(100, 'payg');
    const url = `https://${unique()}.example.com/app`;
    const body = await json(await tool(account.key, '/onpage-audit', { url, enableJavascript: true }));
    expect((await receivedBy('/v3/on_page/instant_pages', url)).last?.task).toEqual({ url, enable_javascript: true });
    expect(body.meta.costCents).toBe(0.5);
    expect(await wallet(account.organizationId)).toMatchObject({ purchasedBalanceCents: 99.5, heldCents: 0 });
  });

  it('refuses a URL without protocol with 400 naming url, uncharged', async () => {
    const account = await funded(100, 'payg');
    const response = await tool(account.key, '/onpage-audit', { url: 'example.com/page' });
    expect(response.status).toBe(400);
    expect((await json(response)).error.details).toEqual([expect.objectContaining({ field: 'url', location: 'body' })]);
    expect(await wallet(account.organizationId)).toMatchObject({ purchasedBalanceCents: 100, heldCents: 0 });
  });
});

describe('the built-in audit, when DataForSEO is not configured', () => {
  it('reads title, description, headings, canonical, robots, images without alt, links and word count', async () => {
    const item = await audit(AUDITED);
    expect(item.meta).toMatchObject({
      title: 'Harbour ferries, fares and timetables',
      description: 'When the island ferries leave and what a crossing costs.',
      htags: { h1: ['Ferries'], h2: ['Fares', 'Timetable'] },
      canonical: 'https://shop.example.net/ferries',
      favicon: 'https://shop.example.net/favicon.ico',
      robots: 'noindex, nofollow',
      follow: false,
      internal_links_count: 2,
      external_links_count: 1,
      images_count: 3,
      images_without_alt_count: 2,
      images_without_alt: ['https://shop.example.net/b.png', 'https://shop.example.net/c.png'],
      scripts_count: 2,
      render_blocking_scripts_count: 1,
      render_blocking_stylesheets_count: 1,
    });
    expect(item.meta.content.plain_text_word_count).toBe(['Ferries', 'Fares', 'Timetable', ...WORDS.split(' '), 'Fares', 'Old', 'timetable', 'Tourist', 'office'].length);
    expect(item.checks).toMatchObject({
      no_title: false,
      no_description: false,
      no_h1_tag: false,
      canonical: true,
      no_image_alt: true,
      noindex: true,
      https_to_http_links: true,
      has_render_blocking_resources: true,
      has_html_doctype: true,
      is_https: true,
      is_4xx_code: false,
    });
    expect(item.resource_type).toBe('html');
    expect(item.page_timing.duration_time).toBeGreaterThanOrEqual(item.page_timing.waiting_time);
  });

  it('finds a bare page missing its title, description, h1 and doctype, and scores it lower', async () => {
    const bare = await audit('<html><body><p>Hello.</p></body></html>');
    expect(bare.checks).toMatchObject({ no_title: true, no_description: true, no_h1_tag: true, no_doctype: true, canonical: false, no_image_alt: false, noindex: false });
    expect(bare.meta).toMatchObject({ title: null, description: null, htags: {}, canonical: null, follow: true });
    const full = await audit(AUDITED.replace('noindex, nofollow', 'index, follow'));
    expect(full.onpage_score).toBeGreaterThan(bare.onpage_score);
    expect(bare.onpage_score).toBeLessThan(100);
  });

  it('scores a page answered 404 as broken, 0', async () => {
    const item = await audit('<!doctype html><html><head><title>Not found</title></head><body><h1>Not found</h1></body></html>', { status: 404 });
    expect(item).toMatchObject({ resource_type: 'broken', status_code: 404, onpage_score: 0 });
    expect(item.checks).toMatchObject({ is_4xx_code: true, is_broken: true });
  });

  it('audits what the browser built with enableJavascript (the renderer is handed the page and the safe fetch\'s check)', async () => {
    const asked: { url: string; options: RenderOptions }[] = [];
    const renderer: Renderer = {
      async render(url, options): Promise<RenderedPage> {
        asked.push({ url, options });
        return { html: AUDITED, finalUrl: url, status: 200, contentType: 'text/html', actionScreenshots: [], actionScrapes: [], refusedRequests: 0, blockedAds: 0 };
      },
    };
    const item = await audit('<!doctype html><html><body><div id="root"></div><script src="/app.js"></script></body></html>', { renderer });
    expect(asked).toHaveLength(1);
    expect(item.meta.title).toBe('Harbour ferries, fares and timetables');
    expect(item.rendered).toBe(true);
    await expect(asked[0]!.options.assertAllowed(new URL('http://169.254.169.254/'))).rejects.toBeInstanceOf(ApiError);
  });

  it('without a browser, enableJavascript answers 503 PROVIDER_UNAVAILABLE naming the BROWSER binding', async () => {
    const site = web();
    const error = await auditWithBuiltin({ url: 'https://shop.example.net/x', enableJavascript: true }, { env: webEnv(), signal: signal(), fetch: site.fetch }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe('PROVIDER_UNAVAILABLE');
    expect((error as ApiError).message).toContain('BROWSER');
  });

  it('is what /onpage-audit answers without DataForSEO settings: 0.2 cents; a private target is 400 on url, uncharged', async () => {
    const account = await funded(10, 'payg');
    const settings = { DATAFORSEO_LOGIN: undefined, DATAFORSEO_PASSWORD: undefined, SCRAPE_DNS_URL: FAKE_DNS_URL };
    const response = await callWith(settings, account.key, '/onpage-audit', { url: 'https://news.example.com/2026/harbour-dredging' });
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body.data.result[0].items[0]).toMatchObject({ status_code: 200, meta: { title: expect.any(String) }, rendered: false });
    expect(body.meta.costCents).toBe(0.2);

    const refused = await callWith(settings, account.key, '/onpage-audit', { url: 'http://169.254.169.254/latest/meta-data/' });
    expect(refused.status).toBe(400);
    expect((await json(refused)).error.details).toEqual([expect.objectContaining({ field: 'url', location: 'body' })]);
    expect(await wallet(account.organizationId)).toMatchObject({ purchasedBalanceCents: 9.8, heldCents: 0 });
  });
});
