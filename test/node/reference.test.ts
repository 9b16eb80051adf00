/**
 * The published reference end to end against the local stack: /docs rendered by a real browser with every
 * request off this machine refused, the served OpenAPI document under the strictest lint rules, and the
 * typed client (sdk/) generated from it and calling the stack. The same stack also proves what a vendor
 * that cannot be reached costs: workerd's own fetch fails on a real socket, which the fakes inside vitest's
 * workerd cannot produce (Miniflare turns a fake that throws into an HTTP 500). The shared stack
 * (support/shared-stack.ts) has DataForSEO configured at a port where nothing listens.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { opsClient } from '../../scripts/lib/ops-client';
import { TYPES_PATH, typesOf } from '../../scripts/sdk-types';
import { createSluiceClient } from '../../sdk';
import { strictLintProblems } from './support/openapi-lint';
import { ROOT } from './support/processes';
import { type SharedStack, sharedStack } from './support/shared-stack';

let stack: { apiUrl: string; key: string; shared: SharedStack };
let browser: Browser;

beforeAll(async () => {
  const shared = await sharedStack();
  const apiUrl = shared.urls.api!;
  const ops = opsClient(apiUrl, shared.settings.OPS_TOKEN!);
  const organizationId = (await ops.call<{ id: string }>('POST', '/ops/v1/organizations', { name: 'Reference test', plan: 'payg' })).id;
  await ops.call('POST', `/ops/v1/organizations/${organizationId}/wallet/credit`, { purchasedCents: 500 });
  const workspaceId = (await ops.call<{ id: string }>('POST', '/ops/v1/workspaces', { organizationId, name: 'Reference test' })).id;
  const key = (await ops.call<{ key: string }>('POST', '/ops/v1/keys', { workspaceId })).key;
  stack = { apiUrl, key, shared };
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
});

const isLoopback = (url: string) => /^(https?|wss?):\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?\//.test(url) || /^(data|blob|about):/.test(url);

describe('/docs', () => {
  it('renders the whole reference with every request off this machine refused, and asks for none', async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const offMachine: string[] = [];
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (isLoopback(url)) return route.continue();
      offMachine.push(url);
      return route.abort('internetdisconnected');
    });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(String(error)));

    // Opened at an operation's link, as a link shared from the reference would be: the whole reference renders
    // from /openapi.json, and that operation shows its example request body, taken from the document.
    const response = await page.goto(`${stack.apiUrl}/docs#tag/data/POST/scrape`, { waitUntil: 'networkidle' });
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toMatch(/default-src 'none'; script-src 'self';/);
    // Operations of every group, and the example. Read from the page's text every half second rather than clicked
    // through locators: each locator query walks the whole reference Scalar is still rendering, and on a loaded
    // machine a click in the sidebar took over 90 s (CI runs of 1-2 December 2026; 7 s alone). Opened at /docs
    // itself, the example shows only once Scalar has rendered down to it, 25 s here. (No screenshot: it made
    // chromium paint the whole reference, 20 to 30 s, for a picture nothing checks.)
    const expected = ['Scrape one page', 'Company record by website domain', "The organization's credit balance", 'https://acme.example/'];
    const missing = () => page.evaluate((texts) => texts.filter((text) => !document.body.textContent?.includes(text)), expected);
    await expect.poll(missing, { timeout: 100_000, interval: 500 }).toEqual([]);

    expect(offMachine).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  });
});

describe('/openapi.json', () => {
  it('passes @redocly/cli lint with the recommended-strict rules', async () => {
    expect(await strictLintProblems(await (await fetch(`${stack.apiUrl}/openapi.json`)).text(), stack.shared.home, 'reference-openapi.json')).toEqual([]);
  });
});

describe('the typed client (sdk/)', () => {
  it('is what openapi-typescript generates from the served document now (npm run sdk:generate)', async () => {
    const generated = await typesOf(await (await fetch(`${stack.apiUrl}/openapi.json`)).json());
    expect(generated === readFileSync(join(ROOT, TYPES_PATH), 'utf8'), `${TYPES_PATH} is stale: run npm run sdk:generate`).toBe(true);
  });

  it('calls public, keyed and metered routes with typed inputs and answers', async () => {
    const sluice = createSluiceClient({ baseUrl: stack.apiUrl, apiKey: stack.key });

    const catalog = await sluice.GET('/v1/platforms');
    expect(catalog.data?.data.platforms.map((platform) => platform.slug)).toEqual(expect.arrayContaining(['web', 'seo', 'linkedin']));

    const credits = await sluice.GET('/v1/credits');
    expect(credits.data?.data).toMatchObject({ plan: 'payg', purchasedBalanceCents: 500 });

    const scraped = await sluice.POST('/scrape', { body: { url: `${stack.shared.professionalNetwork}/article-200k.html`, formats: ['markdown'] } });
    expect(scraped.response.status).toBe(200);
    // data.result is required in the generated types: no optional chaining to reach the page.
    expect(scraped.data!.data.result[0]!.markdown).toContain('Dredging of the outer harbour');
    expect(scraped.data!.meta.costCents).toBe(0.1);

    const company = await sluice.GET('/v1/data/linkedin/get-company-by-domain', { params: { query: { domain: 'stripe.com' } } });
    expect(company.data?.data.name).toBe('Stripe');
    expect(company.response.headers.get('ratelimit-limit')).toMatch(/^\d+$/);
  });

  it('hands back refusals as the typed error envelope', async () => {
    const sluice = createSluiceClient({ baseUrl: stack.apiUrl, apiKey: stack.key });
    // @ts-expect-error url is required by the generated body type; sent anyway to see the refusal.
    const refused = await sluice.POST('/scrape', { body: { formats: ['markdown'] } });
    expect(refused.response.status).toBe(400);
    expect(refused.error?.error.code).toBe('VALIDATION_ERROR');
    expect(refused.error?.error.details).toEqual([{ field: 'url', location: 'body', message: expect.any(String) }]);

    const anonymous = await createSluiceClient({ baseUrl: stack.apiUrl }).GET('/v1/credits');
    expect(anonymous.response.status).toBe(401);
    expect(anonymous.error?.error.how_to_get_access?.openapi_url).toMatch(/\/openapi\.json$/);
  });
});

describe('a vendor that cannot be reached', () => {
  async function balance(): Promise<{ purchasedBalanceCents: number; availableCents: number }> {
    const sluice = createSluiceClient({ baseUrl: stack.apiUrl, apiKey: stack.key });
    return (await sluice.GET('/v1/credits')).data!.data;
  }

  it.each([
    ['a refused connection (DataForSEO)', 'POST', '/keyword-ideas', { keywords: ['anvils'] }, /^DataForSEO failed: network error/],
    ['a connection closed unanswered (professional-network vendor)', 'GET', '/v1/data/linkedin/get-company-by-domain?domain=connection-reset.example', undefined, /failed: network error/],
  ])('%s is 502 PROVIDER_ERROR, uncharged', async (_, method, path, body, message) => {
    const before = await balance();
    const response = await fetch(`${stack.apiUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    expect(response.status).toBe(502);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('PROVIDER_ERROR');
    expect(error.message).toMatch(message);
    // Money earmarked for the workspace (heldCents) may stay leased; what matters is that none was spent.
    expect(await balance()).toMatchObject({ purchasedBalanceCents: before.purchasedBalanceCents, availableCents: before.availableCents });
  });
});
