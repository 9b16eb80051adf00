import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { clock } from '../../src/core/clock';
import { LAST_SEEN_EVERY_MS } from '../../src/app/auth/sessions';
import { browserOf } from '../../src/app/signed-in-browsers';
import { APP_ORIGIN, dashboard, Person, sessionCookie, setCookies, signInFresh, signUp } from '../support/dashboard';

const PASSWORD = 'a long enough passphrase';
const FIREFOX_MAC = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14.6; rv:133.0) Gecko/20100101 Firefox/133.0';
const CHROME_ANDROID = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36';
const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

/** The same person signed in from another browser, which says `userAgent`. */
async function anotherBrowser(person: Person, userAgent: string): Promise<Person> {
  const response = await signInFresh(person.account.user.email, PASSWORD, { 'user-agent': userAgent });
  expect(response.status).toBe(200);
  return new Person(sessionCookie(response)!, person.account);
}

const browsersOf = async (person: Person) => (await person.json('GET', '/api/me/sessions')).body.data.sessions as { id: string; browser: string; current: boolean; signedInAt: string; lastSeenAt: string }[];
const DAY = 24 * 60 * 60 * 1000;
const signedIn = async (person: Person) => (await person.json('GET', '/api/me')).status === 200;

describe('the browsers signed in to an account', () => {
  it('lists each, named by its browser, the asking one marked; signs out one, then every other', async () => {
    const person = await signUp();
    const laptop = await anotherBrowser(person, FIREFOX_MAC);
    const phone = await anotherBrowser(person, CHROME_ANDROID);

    const listed = await browsersOf(laptop);
    expect(listed).toHaveLength(3);
    expect(listed.filter((browser) => browser.current).map((browser) => browser.browser)).toEqual(['Firefox on macOS']);
    expect(listed.map((browser) => browser.browser)).toContain('Chrome on Android');

    // The Settings page lists them too, the asking one marked.
    const page = await laptop.request('GET', `/w/${person.workspaceId}/settings`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toMatch(/Firefox on macOS\s*<span class="badge plain">this browser<\/span>/);
    expect(html).toContain('Chrome on Android');

    const phoneId = listed.find((browser) => browser.browser === 'Chrome on Android')!.id;
    expect((await laptop.json('DELETE', `/api/me/sessions/${phoneId}`)).status).toBe(200);
    expect(await signedIn(phone)).toBe(false);
    expect(await signedIn(person)).toBe(true);

    expect((await laptop.json('POST', '/api/me/sessions/sign-out-others')).body.data).toEqual({ signedOut: 1 });
    expect(await signedIn(person)).toBe(false);
    expect(await signedIn(laptop)).toBe(true);
    expect((await browsersOf(laptop)).map((browser) => browser.current)).toEqual([true]);
  });

  it('leaves out a session past its lifetime', async () => {
    const person = await signUp();
    const laptop = await anotherBrowser(person, FIREFOX_MAC);
    expect(await browsersOf(laptop)).toHaveLength(2);
    // The sign-up's session (its browser sent no User-Agent) reaches its end; the laptop's has a day left.
    const laptopEnds = (await env.DB.prepare('SELECT expires_at AS at FROM sessions WHERE user_id = ? AND user_agent IS NOT NULL').bind(person.account.user.id).first<{ at: string }>())!.at;
    await env.DB.prepare('UPDATE sessions SET expires_at = ? WHERE user_id = ? AND user_agent IS NULL').bind(new Date(Date.parse(laptopEnds) - DAY).toISOString(), person.account.user.id).run();
    clock.now = () => Date.parse(laptopEnds) - DAY;
    expect((await browsersOf(laptop)).map((browser) => browser.browser)).toEqual(['Firefox on macOS']);
  });

  it("cannot sign out another person's browser: 404, and theirs stays signed in", async () => {
    const person = await signUp();
    const stranger = await signUp();
    const [theirs] = await browsersOf(person);
    expect((await stranger.json('DELETE', `/api/me/sessions/${theirs!.id}`)).status).toBe(404);
    expect(await signedIn(person)).toBe(true);
    expect((await stranger.json('DELETE', '/api/me/sessions/not-an-id')).status).toBe(400);
  });

  it('says when each was last used, written at most once an hour', async () => {
    const person = await signUp();
    const [first] = await browsersOf(person);
    const later = Date.parse(first!.lastSeenAt) + LAST_SEEN_EVERY_MS + 60_000;
    clock.now = () => later - 120_000;
    await browsersOf(person);
    expect((await browsersOf(person))[0]!.lastSeenAt).toBe(first!.lastSeenAt);
    clock.now = () => later;
    await browsersOf(person);
    expect((await browsersOf(person))[0]!.lastSeenAt).toBe(new Date(later).toISOString());
  });

  it.each([
    [FIREFOX_MAC, 'Firefox on macOS'],
    [CHROME_ANDROID, 'Chrome on Android'],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0', 'Edge on Windows'],
    ['Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1', 'Safari on iOS'],
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36', 'Chrome on Linux'],
    ['something else', 'An unknown browser'],
  ])('names %s as %s', (userAgent, name) => {
    expect(browserOf(userAgent)).toBe(name);
  });
});

describe('a sign-in from a browser new to the account', () => {
  it('is emailed to the account, naming the browser; one from a browser that signed in before is not', async () => {
    const person = await signUp();
    const email = person.account.user.email;
    const signIn = (headers: Record<string, string>) =>
      dashboard(
        '/api/auth/sign-in',
        {
          method: 'POST',
          // Through the edge from a client of its own (an IPv6 /64), so no other test's sign-ins count with these.
          headers: { origin: APP_ORIGIN, 'content-type': 'application/json', 'cf-connecting-ip': `2001:db8:${Array.from(crypto.getRandomValues(new Uint16Array(2)), (part) => part.toString(16)).join(':')}::1`, ...headers },
          body: JSON.stringify({ email, password: PASSWORD }),
          cf: { colo: 'AMS' },
        },
        { DEV_OUTBOX: '1' },
      );
    const notices = async () =>
      (await env.DB.prepare("SELECT body FROM email_outbox WHERE recipient = ? AND subject = 'A new browser signed in to your Sluice account'").bind(email).all<{ body: string }>()).results.map((row) => row.body);

    const first = await signIn({ 'user-agent': FIREFOX_MAC });
    expect(first.status).toBe(200);
    expect(await notices()).toEqual([expect.stringContaining('Firefox on macOS signed in to the Sluice account')]);
    // The same browser again, with the cookie that says it signed in before: nothing more.
    const device = setCookies(first).find((cookie) => cookie.startsWith('sluice_device='))!.split(';')[0]!;
    expect((await signIn({ 'user-agent': FIREFOX_MAC, cookie: device })).status).toBe(200);
    expect(await notices()).toHaveLength(1);
    expect((await signIn({ 'user-agent': CHROME_ANDROID })).status).toBe(200);
    expect(await notices()).toEqual([expect.any(String), expect.stringContaining('Chrome on Android')]);
  });
});
