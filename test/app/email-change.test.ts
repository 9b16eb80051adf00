import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { clock } from '../../src/core/clock';
import { EMAIL_CHANGE_LIFETIME_MS, EMAIL_CHANGES_PER_INBOX, EMAIL_CHANGES_PER_USER } from '../../src/app/email-changes';
import { APP_ORIGIN, dashboard, followEmailLink, type Person, signInFresh, signUp } from '../support/dashboard';

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

const PASSWORD = 'a long enough passphrase';
const fresh = () => `moved-${crypto.randomUUID().slice(0, 8)}@example.com`;
const askToChange = (person: Person, email: string, currentPassword = PASSWORD) => person.json('POST', '/api/me/email', { email, currentPassword }, { bindings: { DEV_OUTBOX: '1' } });
const signIn = (email: string, password = PASSWORD) => signInFresh(email, password);

/** The newest message to `email` whose subject starts with `subject`, from the development outbox. */
async function mailTo(email: string, subject: string): Promise<string | undefined> {
  const row = await env.DB.prepare('SELECT body FROM email_outbox WHERE recipient = ? AND subject LIKE ? ORDER BY created_at DESC, rowid DESC LIMIT 1').bind(email, `${subject}%`).first<{ body: string }>();
  return row?.body;
}

async function changeLink(email: string): Promise<string> {
  const link = /https?:\/\/\S+(\/confirm-email-change\?token=[0-9a-f]{64})/.exec((await mailTo(email, 'Confirm your new email address')) ?? '')?.[1];
  if (!link) throw new Error(`no change link for ${email} in the outbox`);
  return link;
}

/** Opens the link's page, as a browser or a mail scanner does: it changes nothing. */
const look = async (path: string) => {
  const response = await dashboard(path, {}, { DEV_OUTBOX: '1' });
  return { status: response.status, html: await response.text(), referrerPolicy: response.headers.get('referrer-policy') };
};
/** Opens the link's page and presses its button, as the new address's owner does. */
const open = (path: string) => followEmailLink(`${APP_ORIGIN}${path}`);

describe('changing the email address one signs in with', () => {
  it('waits for the link sent to the new address; then the account signs in with it, counts it confirmed, and the old address is told', async () => {
    const person = await signUp();
    const old = person.account.user.email;
    const next = fresh();
    const asked = await askToChange(person, next);
    expect(asked.status).toBe(200);
    expect(asked.body.data).toEqual({ sentTo: next, emailed: 'outbox' });
    // Nothing changes until the link is opened.
    expect((await signIn(old)).status).toBe(200);

    // Its page alone, as a mail scanner opens every link of a message, changes nothing.
    const seen = await look(await changeLink(next));
    expect([seen.status, seen.referrerPolicy]).toEqual([200, 'no-referrer']);
    expect(seen.html).toContain(`Sign in with ${next}`);
    expect((await signIn(old)).status).toBe(200);
    const opened = await open(await changeLink(next));
    expect(opened.status).toBe(200);
    expect((await person.json('GET', '/api/me')).body.data.user).toMatchObject({ email: next, emailVerifiedAt: expect.any(String) });
    expect((await signIn(next)).status).toBe(200);
    expect((await signIn(old)).status).toBe(401);
    expect(await mailTo(old, 'Your Sluice account has a new email address')).toContain(next);
    // Spent.
    expect((await open(await changeLink(next))).status).toBe(404);
  });

  it('needs the password, a new address, and one no other account uses', async () => {
    const person = await signUp();
    const wrong = await askToChange(person, fresh(), 'not my password');
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.details).toEqual([expect.objectContaining({ field: 'currentPassword' })]);
    const same = await askToChange(person, person.account.user.email);
    expect([same.status, same.body.error.details[0].field]).toEqual([400, 'email']);
    const other = await signUp();
    expect((await askToChange(person, other.account.user.email)).status).toBe(409);
    const invalid = await askToChange(person, 'not an address');
    expect([invalid.status, invalid.body.error.details[0].field]).toEqual([400, 'email']);
  });

  it('changes nothing with a link past its day, replaced by a newer one, or to an address taken meanwhile', async () => {
    const person = await signUp();
    const first = fresh();
    await askToChange(person, first);
    const firstLink = await changeLink(first);
    const second = fresh();
    await askToChange(person, second);
    expect((await open(firstLink)).status).toBe(404);

    clock.now = () => realNow() + EMAIL_CHANGE_LIFETIME_MS + 1_000;
    expect((await open(await changeLink(second))).status).toBe(404);
    clock.now = realNow;

    const third = fresh();
    await askToChange(person, third);
    const thirdLink = await changeLink(third);
    await signUp({ email: third });
    const taken = await open(thirdLink);
    expect(taken.status).toBe(409);
    expect(taken.message).toContain('already exists');
    expect((await person.json('GET', '/api/me')).body.data.user.email).toBe(person.account.user.email);
  });

  it('tells the old address of the ask, and is void once the password is changed or the other browsers are signed out: someone else with the password may have asked it', async () => {
    const person = await signUp();
    const old = person.account.user.email;
    const next = fresh();
    await askToChange(person, next);
    expect(await mailTo(old, 'Your Sluice account asked to change')).toContain(next);
    const link = await changeLink(next);
    expect((await person.json('POST', '/api/me/password', { currentPassword: PASSWORD, newPassword: 'another long passphrase' })).status).toBe(200);
    expect((await open(link)).status).toBe(404);
    expect((await signIn(old, 'another long passphrase')).status).toBe(200);

    const other = await signUp();
    const elsewhere = fresh();
    await askToChange(other, elsewhere);
    const otherLink = await changeLink(elsewhere);
    expect((await other.json('POST', '/api/me/sessions/sign-out-others')).status).toBe(200);
    expect((await open(otherLink)).status).toBe(404);
    expect((await other.json('GET', '/api/me')).body.data.user.email).toBe(other.account.user.email);
  });

  it(`sends at most ${EMAIL_CHANGES_PER_INBOX.limit} change links a day to one inbox, whichever accounts ask`, async () => {
    const inbox = fresh();
    const [name, domain] = inbox.split('@');
    for (let asked = 0; asked < EMAIL_CHANGES_PER_INBOX.limit; asked++) expect((await askToChange(await signUp(), `${name}+${asked}@${domain}`)).status).toBe(200);
    const refused = await askToChange(await signUp(), inbox);
    expect([refused.status, refused.body.error.code]).toEqual([429, 'RATE_LIMITED']);
  });

  it(`asks at most ${EMAIL_CHANGES_PER_USER.limit} times an hour: each is an email to an address of the person's choosing`, async () => {
    const person = await signUp();
    for (let asked = 0; asked < EMAIL_CHANGES_PER_USER.limit; asked++) expect((await askToChange(person, fresh())).status).toBe(200);
    expect((await askToChange(person, fresh())).status).toBe(429);
  });
});
