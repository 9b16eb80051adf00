/**
 * Debian's chromium driven by playwright-core (no browser download): launched with the flags this
 * machine needs, and a page that records every console error and uncaught exception for the test to check.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import axe from 'axe-core';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { ROOT } from './processes';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOTS = join(ROOT, 'test-results', 'screenshots');

/**
 * Options for every `page.request` call: one retry of a reset connection. workerd closes a connection idle for 5 s,
 * and Playwright's client, which keeps connections for reuse, loses a request sent on one at that instant
 * (`socket hang up`, a clean-clone run of 2026-12-02). Playwright's `maxRetries` retries ECONNRESET alone.
 */
export const RETRY_RESET = { maxRetries: 1 } as const;

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`No chromium at ${CHROMIUM}: install it with "apt-get install -y chromium" (.ci/run does), or set CHROMIUM_PATH.`);
  mkdirSync(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

export interface WatchedPage {
  page: Page;
  /** Console errors and uncaught exceptions seen so far. */
  problems: string[];
}

export async function watchedPage(context: BrowserContext): Promise<WatchedPage> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`exception: ${error.message}`));
  return { page, problems };
}

/**
 * The whole page as a person sees it, saved to look at. PNG, though JPEG cost the dashboard's file about 10
 * fewer CPU-seconds of its ~110: the image viewer this project's sessions look with shows PNG only.
 */
export function screenshot(page: Page, name: string) {
  return page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/**
 * What a person would see as broken in the page's layout at its current width: the page wider than the
 * window, an element sticking out of its card (one inside a scrolling box is left to the box, which must
 * fit itself), a table wider than its wrapper (its last columns and their buttons a sideways swipe away,
 * which nothing on the page tells; the plans' comparison scrolls on purpose, its terms held in place), and
 * rendered text smaller than 10 px (an SVG label scaled down with its drawing counts at the size it is drawn).
 */
export function layoutProblems(page: Page): Promise<string[]> {
  // No named function inside: the callback runs in the page as its source text, without the bundler's helpers.
  return page.evaluate(() => {
    const found: { element: Element; problem: string }[] = [];
    const root = document.documentElement;
    if (root.scrollWidth > root.clientWidth) found.push({ element: root, problem: `is ${root.scrollWidth - root.clientWidth} px wider than the window` });
    for (const card of document.querySelectorAll('.card, .stat')) {
      const box = card.getBoundingClientRect();
      for (const element of card.querySelectorAll('*')) {
        const rect = element.getBoundingClientRect();
        if (rect.width === 0 || rect.height === 0) continue;
        let scrolled = false;
        for (let parent = element.parentElement; parent && parent !== card && !scrolled; parent = parent.parentElement) scrolled = getComputedStyle(parent).overflowX !== 'visible';
        if (scrolled) continue;
        const out = Math.max(box.left - rect.left, rect.right - box.right);
        if (out > 0.5) found.push({ element, problem: `sticks out of its card by ${Math.round(out)} px` });
      }
    }
    for (const wrap of document.querySelectorAll('.table-wrap')) {
      const table = wrap.querySelector('table');
      if (!table || table.classList.contains('compare')) continue;
      const hidden = wrap.scrollWidth - wrap.clientWidth;
      if (hidden > 0.5) found.push({ element: table, problem: `is ${hidden} px wider than its wrapper, columns hidden to the right` });
    }
    const texts = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = texts.nextNode(); node; node = texts.nextNode()) {
      const parent = node.parentElement;
      if (!parent || !node.textContent?.trim() || parent.closest('.visually-hidden')) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      if ([...range.getClientRects()].every((rect) => rect.width === 0)) continue;
      const scale = parent instanceof SVGGraphicsElement ? (parent.getScreenCTM()?.a ?? 1) : 1;
      const size = parseFloat(getComputedStyle(parent).fontSize) * scale;
      if (size < 10) found.push({ element: parent, problem: `is ${size.toFixed(1)} px text` });
    }
    return found.map(({ element, problem }) => {
      if (element === root) return `the page ${problem}`;
      const classes = typeof element.className === 'string' && element.className.trim() ? `.${element.className.trim().split(/\s+/).join('.')}` : '';
      return `<${element.tagName.toLowerCase()}${classes}> "${(element.textContent ?? '').trim().slice(0, 40)}" ${problem}`;
    });
  });
}

/**
 * What axe-core finds in the page that would stop or mislead someone on a screen reader, a keyboard or with
 * poor eyesight: its violations of impact serious or critical, one line per element. Every rule runs in the
 * colour scheme the page is in; contrast, the one rule a scheme changes, runs in the dark scheme too (the
 * stylesheet has one of its own). The engine goes in through the debugging protocol, which the page's
 * Content-Security-Policy (no inline script) does not govern.
 */
export async function accessibilityProblems(page: Page): Promise<string[]> {
  const run = async (only?: string[]) => {
    if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axe.source);
    const { violations } = await page.evaluate(
      (rules) => (window as unknown as { axe: typeof axe }).axe.run(document, { resultTypes: ['violations'], ...(rules ? { runOnly: { type: 'rule', values: rules } } : {}) }),
      only,
    );
    return violations
      .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      .flatMap((violation) => violation.nodes.map((node) => `${violation.id} (${violation.impact}) at ${node.target.join(' ')}: ${node.failureSummary?.replace(/\s+/g, ' ')}`));
  };
  const light = await run();
  await page.emulateMedia({ colorScheme: 'dark' });
  try {
    return [...light, ...(await run(['color-contrast'])).map((problem) => `in the dark scheme, ${problem}`)];
  } finally {
    await page.emulateMedia({ colorScheme: null });
  }
}

/**
 * Opens the newest confirmation link the stack's development outbox holds for `email` in a tab of its own, as
 * its recipient would from their inbox, presses its Confirm button (opening the link alone spends nothing), and
 * answers that tab on the page it led to (closed by the caller).
 */
export async function openConfirmationLink(context: BrowserContext, appUrl: string, email: string, screenshotAs?: string): Promise<Page> {
  const inbox = await context.newPage();
  await inbox.goto(new URL('/dev/outbox', appUrl).href);
  const message = inbox.locator(`[data-message-to="${email}"]`, { hasText: 'Confirm your email address' }).first();
  const link = /https?:\/\/\S+\/verify-email\?token=[0-9a-f]+/.exec((await message.locator('pre').textContent()) ?? '')?.[0];
  if (!link) throw new Error(`no confirmation link for ${email} in the development outbox`);
  await inbox.goto(link);
  if (screenshotAs) await screenshot(inbox, screenshotAs);
  await inbox.getByRole('button', { name: `Confirm ${email}` }).click();
  await inbox.getByRole('heading', { name: 'Email address confirmed' }).waitFor();
  return inbox;
}

/**
 * Signs up through the dashboard's form, as a new person would, and waits for the API keys page sign-up leads to;
 * answers its path (`/w/<workspace>/keys`).
 */
export async function signUpInBrowser(page: Page, name: string, email: string, password = 'a long enough passphrase'): Promise<string> {
  await page.goto('/signup');
  await page.getByLabel('Your name').fill(name);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.waitForURL(/\/w\/ws_[0-9a-f]{24}\/keys$/);
  return new URL(page.url()).pathname;
}
