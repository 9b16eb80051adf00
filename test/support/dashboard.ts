import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import app from '../../src/app';

export const APP_ORIGIN = new URL(env.APP_URL).origin;

/** A request to the dashboard worker under test, through its real fetch handler, with the bindings it deploys with. */
export async function dashboard(path: string, init: RequestInit = {}, bindings: Record<string, unknown> = {}): Promise<Response> {
  const context = createExecutionContext();
  const response = await app.fetch(new Request(`${APP_ORIGIN}${path}`, init), { ...env, ...bindings }, context);
  await waitOnExecutionContext(context);
  return response;
}

/** Every Set-Cookie line of a response (workerd has getSetCookie; its type declarations lag). */
export function setCookies(response: Response): string[] {
  return (response.headers as Headers & { getSetCookie(): string[] }).getSetCookie();
}

/** The value of the session cookie a response set, or undefined. */
export function sessionCookie(response: Response): string | undefined {
  const header = setCookies(response).find((cookie) => /^(__Host-)?sluice_session=/.test(cookie));
  return header ? /=([^;]*)/.exec(header)![1] : undefined;
}

let people = 0;

/** Someone signed in: their cookie, and requests sent as their browser would (same origin, JSON). */
export class Person {
  constructor(
    public cookie: string,
    public readonly account: { user: { id: string; email: string }; organization: { id: string }; workspace: { id: string } },
  ) {}

  get workspaceId() {
    return this.account.workspace.id;
  }

  get organizationId() {
    return this.account.organization.id;
  }

  /** `cf`: sent as Cloudflare's edge forwards a request (only then is its cf-connecting-ip believed). */
  request(method: string, path: string, body?: unknown, options: { headers?: Record<string, string>; bindings?: Record<string, unknown>; cf?: { colo: string } } = {}): Promise<Response> {
    return dashboard(
      path,
      {
        method,
        headers: { cookie: `sluice_session=${this.cookie}`, origin: APP_ORIGIN, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(options.cf ? { cf: options.cf } : {}),
      },
      options.bindings,
    );
  }

  async json<T = any>(method: string, path: string, body?: unknown, options: { bindings?: Record<string, unknown> } = {}): Promise<{ status: number; body: T }> {
    const response = await this.request(method, path, body, options);
    return { status: response.status, body: (await response.json()) as T };
  }
}

/**
 * A new account through the real sign-up route, from an address of its own so sign-up throttling stays out of
 * the way. Its email address is confirmed as a person would, by opening the link the sign-up sent (kept in the
 * development outbox), unless `confirmed` is false.
 */
export async function signUp(overrides: Partial<{ email: string; password: string; name: string }> = {}, { confirmed = true } = {}): Promise<Person> {
  people += 1;
  const body = { email: `person${people}-${crypto.randomUUID().slice(0, 8)}@example.com`, password: 'a long enough passphrase', name: `Person ${people}`, ...overrides };
  const response = await dashboard(
    '/api/auth/sign-up',
    {
      method: 'POST',
      headers: { origin: APP_ORIGIN, 'content-type': 'application/json', 'cf-connecting-ip': `198.51.100.${people % 250}` },
      body: JSON.stringify(body),
      // As Cloudflare's edge forwards it: only then is the address believed, and each person gets their own.
      cf: { colo: 'AMS' },
    },
    { DEV_OUTBOX: '1' },
  );
  if (response.status !== 201) throw new Error(`sign-up failed: ${response.status} ${await response.text()}`);
  const account = ((await response.json()) as { data: Person['account'] }).data;
  if (confirmed) {
    const followed = await followEmailLink(await confirmationLink(body.email));
    if (followed.status !== 200) throw new Error(`the confirmation link answered ${followed.status}`);
  }
  return new Person(sessionCookie(response)!, account);
}

/**
 * Follows a link from an email as its recipient does: opens its page, which spends nothing, and presses the page's
 * button, which does what the link is for. Answers the button's status and message, or the page's status when it
 * offers no button (a link that no longer works); `page` is the opened page's HTML.
 */
export async function followEmailLink(link: string): Promise<{ status: number; message?: string; page: string }> {
  const url = new URL(link);
  const opened = await dashboard(url.pathname + url.search, {}, { DEV_OUTBOX: '1' });
  const page = await opened.text();
  const form = /<form[^>]*data-api="([^"]+)"[\s\S]*?name="token" value="([0-9a-f]{64})"/.exec(page);
  if (!form) return { status: opened.status, page };
  const pressed = await dashboard(
    form[1]!,
    { method: 'POST', headers: { origin: APP_ORIGIN, 'content-type': 'application/json' }, body: JSON.stringify({ token: form[2] }) },
    { DEV_OUTBOX: '1' },
  );
  const answer = (await pressed.json()) as { error?: { message: string } };
  return { status: pressed.status, message: answer.error?.message, page };
}

/** Makes `person` a member of an organization straight in D1, as an accepted invitation would. */
export async function join(person: Person, organizationId: string, role: 'owner' | 'admin' | 'member'): Promise<void> {
  await env.DB.prepare('INSERT INTO memberships (organization_id, user_id, role, created_at) VALUES (?, ?, ?, ?)').bind(organizationId, person.account.user.id, role, new Date().toISOString()).run();
}

/** The link of the last confirmation email sent to `email`, from the development outbox. */
export async function confirmationLink(email: string): Promise<string> {
  const message = await env.DB.prepare("SELECT body FROM email_outbox WHERE recipient = ? AND subject LIKE 'Confirm your email%' ORDER BY created_at DESC, rowid DESC LIMIT 1")
    .bind(email)
    .first<{ body: string }>();
  const link = message && /https?:\/\/\S+\/verify-email\?token=[0-9a-f]+/.exec(message.body)?.[0];
  if (!link) throw new Error(`no confirmation email to ${email} in the outbox`);
  return link;
}

/** A sign-in from a client of its own (an IPv6 /64, what the throttles count), through the edge as deployed. */
export function signInFresh(email: string, password: string, headers: Record<string, string> = {}): Promise<Response> {
  return dashboard('/api/auth/sign-in', {
    method: 'POST',
    headers: { origin: APP_ORIGIN, 'content-type': 'application/json', 'cf-connecting-ip': `2001:db8:${[...crypto.getRandomValues(new Uint16Array(2))].map((part) => part.toString(16)).join(':')}::1`, ...headers },
    body: JSON.stringify({ email, password }),
    cf: { colo: 'AMS' },
  });
}
