import { describe, expect, it } from 'vitest';
import type { RenderedPage, Renderer, RenderOptions } from '../../src/core/render';
import { scrapeInput } from '../../src/core/web-inputs';
import { browserAsks, checkActions, isAdHost, looksScriptBuilt } from '../../src/providers/builtin-web/render-policy';
import { scrapeWithBuiltin } from '../../src/providers/builtin-web/scrape';
import type { ScrapeInput } from '../../src/providers/builtin-web/inputs';
import { ApiError } from '../../src/core/errors';
import { signal, web, webEnv } from './support';

/**
 * When the built-in provider renders, and what it refuses before any browser is asked: the decisions, with a
 * renderer that records what it was asked (the browser itself is driven by test/node/render.test.ts).
 */

const ARTICLE = 'https://news.example.com/2026/harbour-dredging';
const TEXT = 'The harbour reopened on Monday after three weeks of repairs to the north pier, and the first ferry left on time. '.repeat(3);

class RecordingRenderer implements Renderer {
  readonly asked: { url: string; options: RenderOptions }[] = [];
  constructor(private readonly answer: (url: string) => Promise<RenderedPage> = async (url) => rendered(url, `<main><h1>Rendered</h1><p>${TEXT}</p></main>`)) {}

  render(url: string, options: RenderOptions): Promise<RenderedPage> {
    this.asked.push({ url, options });
    return this.answer(url);
  }
}

function rendered(url: string, body: string): RenderedPage {
  return { html: `<!doctype html><html><head><title>Rendered</title></head><body>${body}</body></html>`, finalUrl: url, status: 200, contentType: 'text/html', actionScreenshots: [], actionScrapes: [], refusedRequests: 0, blockedAds: 0 };
}

function scrape(input: Partial<ScrapeInput> & { url: string }, renderer: Renderer, pages: Record<string, string> = {}) {
  const site = web();
  for (const [path, html] of Object.entries(pages)) site.setPage(`https://plain.example.com${path}`, html);
  return scrapeWithBuiltin(input, { env: webEnv(), signal: signal(), fetch: site.fetch, renderer });
}

const SHELL = '<!doctype html><html><head><title>App</title><script type="module" src="/assets/index.js"></script></head><body><div id="root"></div><noscript>You need to enable JavaScript to run this app.</noscript></body></html>';

describe('the script-built page heuristic', () => {
  it.each([
    ['an empty root and a module script', SHELL],
    ['a loading placeholder and an inline bootstrap', '<body><div id="app">Loading…</div><script>window.boot({ el: "#app" })</script></body>'],
    ['a short title and an external bundle', '<body><h1>Dashboard</h1><script src="/main.js"></script></body>'],
  ])('renders %s', (_, html) => {
    expect(looksScriptBuilt(html)).toBe(true);
  });

  it.each([
    ['a page with its text, even with scripts', `<body><article><p>${TEXT}</p></article><script src="/analytics.js"></script></body>`],
    ['a short page without scripts', '<body><p>Gone fishing.</p></body>'],
    ['a page whose only scripts are data', '<body><div id="root"></div><script type="application/ld+json">{"@type":"Organization"}</script></body>'],
    ['an empty inline script', '<body><div id="root"></div><script> </script></body>'],
  ])('reads %s as served', (_, html) => {
    expect(looksScriptBuilt(html)).toBe(false);
  });

  it('does not count text hidden in noscript, template or style', () => {
    const hidden = `<noscript>${TEXT}</noscript><template>${TEXT}</template><style>${TEXT}</style>`;
    expect(looksScriptBuilt(`<body><div id="root"></div>${hidden}<script src="/a.js"></script></body>`)).toBe(true);
  });
});

describe('what asks for a browser', () => {
  it('is a screenshot format, actions, waitFor or mobile; nothing else', () => {
    expect(browserAsks({ formats: ['markdown'] })).toEqual([]);
    expect(browserAsks({ formats: [{ type: 'screenshot' }], actions: [{ type: 'scrape' }], waitFor: 100, mobile: true })).toEqual(['the screenshot format', 'actions', 'waitFor', 'mobile']);
    expect(browserAsks({ waitFor: 0, mobile: false, actions: [] })).toEqual([]);
  });
});

describe('actions', () => {
  const parsed = (actions: unknown[]) => scrapeInput.parse({ url: ARTICLE, actions }).actions!;

  it('accepts the safe subset of Firecrawl\'s actions', () => {
    const actions = parsed([
      { type: 'wait', milliseconds: 500 },
      { type: 'wait', selector: '#ready' },
      { type: 'click', selector: 'button.more', all: true },
      { type: 'write', text: 'ferry' },
      { type: 'press', key: 'Enter' },
      { type: 'scroll', direction: 'down' },
      { type: 'screenshot', fullPage: true },
      { type: 'scrape' },
    ]);
    expect(checkActions(actions)).toHaveLength(8);
  });

  it('refuses executeJavascript and pdf with 400 naming each action', () => {
    const refused = (() => {
      try {
        checkActions(parsed([{ type: 'scrape' }, { type: 'executeJavascript', script: 'document.title' }, { type: 'pdf' }]));
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toMatchObject({
      code: 'VALIDATION_ERROR',
      status: 400,
      details: [expect.objectContaining({ field: 'actions[1].type', message: expect.stringContaining('executeJavascript') }), expect.objectContaining({ field: 'actions[2].type' })],
    });
  });

  it('refuses a selector that is not CSS and a key it does not know, naming the field', () => {
    expect(() => checkActions(parsed([{ type: 'click', selector: 'button[' }, { type: 'press', key: 'Hyper' }]))).toThrow(
      expect.objectContaining({ details: [expect.objectContaining({ field: 'actions[0].selector' }), expect.objectContaining({ field: 'actions[1].key' })] }),
    );
  });

  it('presses one character of a US keyboard, and refuses one not on it (the browser would throw mid-render)', () => {
    expect(checkActions(parsed([{ type: 'press', key: 'a' }, { type: 'press', key: '/' }, { type: 'press', key: ' ' }]))).toHaveLength(3);
    expect(() => checkActions(parsed([{ type: 'press', key: 'é' }, { type: 'press', key: '字' }]))).toThrow(
      expect.objectContaining({ details: [expect.objectContaining({ field: 'actions[0].key' }), expect.objectContaining({ field: 'actions[1].key' })] }),
    );
  });

  it('refuses a wait with neither or both of milliseconds and selector in the schema', () => {
    expect(scrapeInput.safeParse({ url: ARTICLE, actions: [{ type: 'wait' }] }).success).toBe(false);
    expect(scrapeInput.safeParse({ url: ARTICLE, actions: [{ type: 'wait', milliseconds: 5, selector: 'p' }] }).success).toBe(false);
  });

  it('refuses executeJavascript before any browser or page is asked', async () => {
    const renderer = new RecordingRenderer();
    await expect(scrape({ url: ARTICLE, actions: [{ type: 'executeJavascript', script: '1' }] }, renderer)).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(renderer.asked).toEqual([]);
  });
});

describe('the scrape with a browser configured', () => {
  it('renders a shell its scripts fill in, and answers the rendered text', async () => {
    const renderer = new RecordingRenderer();
    const result = await scrape({ url: 'https://plain.example.com/' }, renderer, { '/': SHELL });
    expect(renderer.asked.map(({ url }) => url)).toEqual(['https://plain.example.com/']);
    expect((result.data as { result: { markdown: string }[] }).result[0]!.markdown).toContain('The harbour reopened');
  });

  it('reads a page with its text as served: the fast path, no browser', async () => {
    const renderer = new RecordingRenderer();
    const result = await scrape({ url: ARTICLE }, renderer);
    expect(renderer.asked).toEqual([]);
    expect((result.data as { result: { markdown: string }[] }).result[0]!.markdown.length).toBeGreaterThan(200);
  });

  it('renders whatever the page when asked for a screenshot, and answers it as a data URL', async () => {
    const renderer = new RecordingRenderer(async (url) => ({ ...rendered(url, `<p>${TEXT}</p>`), screenshot: { mediaType: 'image/png', base64: 'iVBORw0KGgo=' } }));
    const result = await scrape({ url: ARTICLE, formats: [{ type: 'screenshot', fullPage: true, quality: 80 }] }, renderer);
    expect(renderer.asked[0]!.options.screenshot).toEqual({ fullPage: true, quality: 80 });
    expect((result.data as { result: { screenshot: string }[] }).result[0]!.screenshot).toBe('data:image/png;base64,iVBORw0KGgo=');
  });

  it('hands the renderer the mobile agent, the languages and the safe fetch\'s check for every request of the page', async () => {
    const renderer = new RecordingRenderer();
    await scrape({ url: ARTICLE, mobile: true, location: { country: 'DE', languages: ['de-DE', 'en'] } }, renderer);
    const { options } = renderer.asked[0]!;
    expect(options.mobile).toBe(true);
    expect(options.userAgent).toContain('Mobile');
    expect(options.headers).toEqual({ 'accept-language': 'de-DE, en;q=0.9' });
    await expect(options.assertAllowed(new URL('http://169.254.169.254/latest/meta-data/'))).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await expect(options.assertAllowed(new URL('http://localhost:8080/'))).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await expect(options.assertAllowed(new URL(ARTICLE))).resolves.toBeUndefined();
  });

  it('hands the renderer only language tags, as a fetched page is asked: a line break in one cannot reach its headers', async () => {
    const renderer = new RecordingRenderer();
    await scrape({ url: ARTICLE, mobile: true, location: { languages: ['fr-CH', 'x\r\nx-injected: 1', 'fr'] } }, renderer);
    expect(renderer.asked[0]!.options.headers).toEqual({ 'accept-language': 'fr-CH, fr;q=0.9' });
  });

  it('refuses a private target before any browser is asked', async () => {
    const renderer = new RecordingRenderer();
    await expect(scrape({ url: 'http://127.0.0.1:9000/', mobile: true }, renderer)).rejects.toMatchObject({ code: 'VALIDATION_ERROR', details: [expect.objectContaining({ field: 'url' })] });
    expect(renderer.asked).toEqual([]);
  });

  it('answers a shell as served, with a warning, when no browser can be had', async () => {
    const renderer = new RecordingRenderer(async () => {
      throw new ApiError('PROVIDER_UNAVAILABLE', 'The browser that renders pages could not be started.');
    });
    const result = await scrape({ url: 'https://plain.example.com/', formats: ['rawHtml'] }, renderer, { '/': SHELL });
    const page = (result.data as { result: { rawHtml: string; warning: string }[] }).result[0]!;
    expect(page.rawHtml).toContain('<div id="root"></div>');
    expect(page.warning).toContain('could not be rendered');
  });

  it('passes on what the renderer refused the page, as a 422', async () => {
    const renderer = new RecordingRenderer(async () => {
      throw new ApiError('PROVIDER_ERROR', 'The built-in web provider could not answer this request: the page builds more than 40,000 DOM nodes', { status: 422 });
    });
    await expect(scrape({ url: 'https://plain.example.com/' }, renderer, { '/': SHELL })).rejects.toMatchObject({ status: 422 });
  });
});

describe('blockAds', () => {
  it('matches the ad networks and their subdomains, nothing else', () => {
    expect(isAdHost('securepubads.g.doubleclick.net')).toBe(true);
    expect(isAdHost('pagead2.googlesyndication.com')).toBe(true);
    expect(isAdHost('doubleclick.net.example.com')).toBe(false);
    expect(isAdHost('news.example.com')).toBe(false);
  });
});
