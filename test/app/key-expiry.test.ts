import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { clock } from '../../src/core/clock';
import type { Env } from '../../src/core/config';
import { noticeExpiringKeys } from '../../src/app/key-expiry-notice';
import { call, eventually, json, ops } from '../support/api';
import { type Person, join, signUp } from '../support/dashboard';
import { FAKE_RECEIVER, type ReceivedRequest } from '../fakes/webhook-receiver';
import { listTools } from '../mcp-oauth/support';

const DAY = 86_400_000;
const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

async function makeKey(person: Person, workspaceId: string, body: Record<string, unknown>) {
  const made = await person.json('POST', `/api/workspaces/${workspaceId}/keys`, body);
  expect(made.status).toBe(201);
  return made.body.data as { id: string; key: string; expiresAt: string | null };
}

const setExpiry = (person: Person, workspaceId: string, keyId: string, body: unknown) => person.json('PUT', `/api/workspaces/${workspaceId}/keys/${keyId}/expiry`, body);
const credits = (key: string) => call('/v1/credits', { headers: { authorization: `Bearer ${key}` } });

/** The notices of keys and MCP tokens about to expire in the outbox, to `email`. */
async function notices(email: string): Promise<{ subject: string; body: string }[]> {
  const { results } = await env.DB.prepare("SELECT subject, body FROM email_outbox WHERE recipient = ? AND (subject LIKE 'Your Sluice API key %' OR subject LIKE 'Your Sluice MCP token %') ORDER BY rowid")
    .bind(email)
    .all<{ subject: string; body: string }>();
  return results;
}

const dailyRun = () => noticeExpiringKeys({ ...env, DEV_OUTBOX: '1' } as Env);

describe("a key's expiry, changed after it was made", () => {
  it('moves later or sooner, or goes, from today; the key follows at once', async () => {
    const owner = await signUp();
    const made = await makeKey(owner, owner.workspaceId, { name: 'ci', expiresInDays: 7 });
    // A second before it expires, the key is called (this isolate remembers it), then given 90 days from then.
    const oldExpiry = Date.parse(made.expiresAt!);
    clock.now = () => oldExpiry - 1_000;
    expect((await credits(made.key)).status).toBe(200);
    const longer = await setExpiry(owner, owner.workspaceId, made.id, { expiresInDays: 90 });
    expect(longer.status).toBe(200);
    expect(Date.parse(longer.body.data.expiresAt) - clock.now()).toBe(90 * DAY);
    // Past the old instant it works at once: the memory's expiry is read again before a refusal.
    clock.now = () => oldExpiry + 1;
    expect((await credits(made.key)).status).toBe(200);
    clock.now = realNow;

    // A key that never expired is given a day: it works now, however recently an isolate read it, and is refused from then.
    const forever = await makeKey(owner, owner.workspaceId, { name: 'forever' });
    expect((await credits(forever.key)).status).toBe(200);
    const sooner = await setExpiry(owner, owner.workspaceId, forever.id, { expiresInDays: 1 });
    expect((await credits(forever.key)).status).toBe(200);
    clock.now = () => Date.parse(sooner.body.data.expiresAt) + 1;
    const refused = await credits(forever.key);
    expect(refused.status).toBe(401);
    expect((await json(refused)).error.message).toBe(`This key expired at ${sooner.body.data.expiresAt}. Make a new key in the dashboard.`);
    // An expired key stays expired.
    const late = await setExpiry(owner, owner.workspaceId, forever.id, { expiresInDays: 30 });
    expect(late).toMatchObject({ status: 409, body: { error: { message: expect.stringContaining('an expired key stays expired') } } });
    clock.now = realNow;

    expect((await setExpiry(owner, owner.workspaceId, made.id, { expiresInDays: null })).body.data.expiresAt).toBeNull();
    const activity = await owner.json('GET', `/api/organizations/${owner.organizationId}/activity`);
    expect(activity.body.data.events.filter((entry: { action: string }) => entry.action === 'key.expiry_changed').map((entry: { detail: string }) => entry.detail)).toEqual([
      'never expires',
      `expires ${sooner.body.data.expiresAt.slice(0, 16).replace('T', ' ')} UTC`,
      `expires ${longer.body.data.expiresAt.slice(0, 16).replace('T', ' ')} UTC`,
    ]);
  });

  it('is refused for a revoked key, for days out of range, and to a member for a key not theirs', async () => {
    const owner = await signUp();
    const member = await signUp();
    await join(member, owner.organizationId, 'member');
    const owners = await makeKey(owner, owner.workspaceId, { name: "the owner's" });
    const members = await makeKey(member, owner.workspaceId, { name: "the member's" });

    for (const expiresInDays of [0, 366, 1.5, '30', undefined]) {
      const refused = await setExpiry(owner, owner.workspaceId, owners.id, expiresInDays === undefined ? {} : { expiresInDays });
      expect(refused.status, String(expiresInDays)).toBe(400);
      expect(refused.body.error.details).toEqual([expect.objectContaining({ field: 'expiresInDays' })]);
    }
    expect((await setExpiry(member, owner.workspaceId, owners.id, { expiresInDays: 30 })).status).toBe(403);
    expect((await setExpiry(member, owner.workspaceId, members.id, { expiresInDays: 30 })).status).toBe(200);

    expect((await owner.json('POST', `/api/workspaces/${owner.workspaceId}/keys/${owners.id}/revoke`)).status).toBe(200);
    const revoked = await setExpiry(owner, owner.workspaceId, owners.id, { expiresInDays: 30 });
    expect(revoked).toMatchObject({ status: 409, body: { error: { message: expect.stringContaining('was revoked') } } });
  });

  it('is set by the operator too, on creation and after, for API keys only', async () => {
    const owner = await signUp();
    const created = await ops('POST', '/keys', { workspaceId: owner.workspaceId, name: 'by the operator', expiresInDays: 30 });
    expect(created.status).toBe(201);
    expect(Date.parse(created.body.data.expiresAt) - Date.now()).toBeGreaterThan(30 * DAY - 60_000);
    const changed = await ops('PUT', `/keys/${created.body.data.id}/expiry`, { expiresInDays: null });
    expect(changed).toMatchObject({ status: 200, body: { data: { expiresAt: null } } });
    expect((await ops('PUT', `/keys/${created.body.data.id}/expiry`, { expiresInDays: 0 })).status).toBe(400);

    expect((await ops('POST', '/keys', { workspaceId: owner.workspaceId, scope: 'workspace_mcp', expiresInDays: 1 })).status).toBe(201);
    const agentKey = await ops('POST', '/keys', { workspaceId: owner.workspaceId, scope: 'agent', expiresInDays: 1 });
    expect(agentKey.status).toBe(400);
    expect(agentKey.body.error.details).toEqual([expect.objectContaining({ field: 'expiresInDays' })]);
    const sandbox = await owner.json('POST', `/api/workspaces/${owner.workspaceId}/sandbox-keys`, { name: 'dry run' });
    const forever = await ops('PUT', `/keys/${sandbox.body.data.id}/expiry`, { expiresInDays: null });
    expect(forever).toMatchObject({ status: 409, body: { error: { message: expect.stringContaining('only API keys and MCP tokens') } } });
  });

  it('is given to an MCP token on creation, and /mcp keeps it', async () => {
    const owner = await signUp();
    const token = await owner.json('POST', `/api/workspaces/${owner.workspaceId}/mcp-tokens`, { name: 'agent', expiresInDays: 1 });
    expect(token.status).toBe(201);
    expect((await owner.json('POST', `/api/workspaces/${owner.workspaceId}/mcp-tokens`, { name: 'agent', expiresInDays: 0 })).body.error.details).toEqual([
      expect.objectContaining({ field: 'expiresInDays' }),
    ]);
    const tools = () => listTools('/mcp', token.body.data.key);
    expect((await tools()).status).toBe(200);
    // Given a week from today on the MCP page, then let lapse.
    const week = await owner.json('PUT', `/api/workspaces/${owner.workspaceId}/mcp-tokens/${token.body.data.id}/expiry`, { expiresInDays: 7 });
    expect(week.status).toBe(200);
    expect(Date.parse(week.body.data.expiresAt) - Date.now()).toBeGreaterThan(7 * DAY - 60_000);
    expect(await (await owner.request('GET', `/w/${owner.workspaceId}/mcp`)).text()).toContain('aria-label="Set expiry for agent"');
    clock.now = () => Date.parse(week.body.data.expiresAt) + 1;
    expect((await owner.json('PUT', `/api/workspaces/${owner.workspaceId}/mcp-tokens/${token.body.data.id}/expiry`, { expiresInDays: 30 })).status).toBe(409);
    const refused = await tools();
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('This bearer token expired at');
  });
});

describe('the notice of a key about to expire', () => {
  it("emails the maker and tells the workspace's endpoints once, a week before; a new expiry is noticed again", async () => {
    const owner = await signUp();
    // Webhook events are counted against the plan's monthly number of them.
    await ops('PUT', `/organizations/${owner.organizationId}/plan`, { plan: 'team' });
    const made = await makeKey(owner, owner.workspaceId, { name: 'nightly export', expiresInDays: 30 });
    const url = `${FAKE_RECEIVER}/ok/${crypto.randomUUID()}`;
    const endpoint = await call('/v1/webhook-endpoints', {
      method: 'POST',
      headers: { authorization: `Bearer ${made.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url, events: ['key.expiring'] }),
    });
    expect(endpoint.status).toBe(201);
    const received = async () => ((await (await fetch(`${FAKE_RECEIVER}/_received?path=${encodeURIComponent(new URL(url).pathname)}`)).json()) as ReceivedRequest[]).map((request) => JSON.parse(request.body));

    // Three weeks on: not yet in its last week.
    clock.now = () => Date.parse(made.expiresAt!) - 8 * DAY;
    await dailyRun();
    expect(await notices(owner.account.user.email)).toEqual([]);

    clock.now = () => Date.parse(made.expiresAt!) - 6.5 * DAY;
    await dailyRun();
    await dailyRun();
    const sent = await notices(owner.account.user.email);
    expect(sent).toEqual([
      {
        subject: `Your Sluice API key "nightly export" expires on ${made.expiresAt!.slice(0, 10)}`,
        body: expect.stringContaining(`expires at ${made.expiresAt!.slice(0, 16).replace('T', ' ')} UTC, in 7 days.`),
      },
    ]);
    expect(sent[0]!.body).toContain(`/w/${owner.workspaceId}/keys`);
    expect(sent[0]!.body).toContain('because you made the key');
    const events = await eventually(received, (list) => list.length > 0);
    expect(events).toEqual([{ type: 'key.expiring', timestamp: expect.any(String), data: { workspaceId: owner.workspaceId, key: expect.objectContaining({ id: made.id, name: 'nightly export', expiresAt: made.expiresAt }) } }]);

    // A new expiry is told again in its own last week.
    clock.now = realNow;
    const renewed = await setExpiry(owner, owner.workspaceId, made.id, { expiresInDays: 10 });
    clock.now = () => Date.parse(renewed.body.data.expiresAt) - 3 * DAY;
    await dailyRun();
    expect((await notices(owner.account.user.email)).map((notice) => notice.subject)).toEqual([
      `Your Sluice API key "nightly export" expires on ${made.expiresAt!.slice(0, 10)}`,
      `Your Sluice API key "nightly export" expires on ${renewed.body.data.expiresAt.slice(0, 10)}`,
    ]);
  });

  it('is sent for an MCP token too, pointing to the MCP page', async () => {
    const owner = await signUp();
    const token = await owner.json('POST', `/api/workspaces/${owner.workspaceId}/mcp-tokens`, { name: 'claude desktop', expiresInDays: 30 });
    expect(token.status).toBe(201);
    clock.now = () => Date.parse(token.body.data.expiresAt) - 2 * DAY;
    await dailyRun();
    await dailyRun();
    const sent = await notices(owner.account.user.email);
    expect(sent.map((notice) => notice.subject)).toEqual([`Your Sluice MCP token "claude desktop" expires on ${token.body.data.expiresAt.slice(0, 10)}`]);
    expect(sent[0]!.body).toContain('every MCP client using it is refused with 401');
    expect(sent[0]!.body).toContain(`/w/${owner.workspaceId}/mcp\n`);
    expect(sent[0]!.body).toContain('because you made the MCP token');
  });

  it('is not sent for a key given a week or less, at its making or since', async () => {
    const owner = await signUp();
    const short = await makeKey(owner, owner.workspaceId, { name: 'a week only', expiresInDays: 7 });
    const old = await makeKey(owner, owner.workspaceId, { name: 'made long ago', expiresInDays: 365 });
    // A year-long key made a month ago is given a week from today.
    await env.DB.prepare('UPDATE api_keys SET created_at = ? WHERE id = ?').bind(new Date(Date.now() - 30 * DAY).toISOString(), old.id).run();
    const shortened = await setExpiry(owner, owner.workspaceId, old.id, { expiresInDays: 7 });
    clock.now = () => Date.parse(short.expiresAt!) - 3 * DAY;
    expect(Date.parse(shortened.body.data.expiresAt) - clock.now()).toBeLessThan(7 * DAY);
    await dailyRun();
    expect(await notices(owner.account.user.email)).toEqual([]);
  });

  it('tells the owners and admins when the maker has left, and nobody for a revoked key', async () => {
    const owner = await signUp();
    const admin = await signUp();
    const leaver = await signUp();
    await join(admin, owner.organizationId, 'admin');
    await join(leaver, owner.organizationId, 'member');
    const made = await makeKey(leaver, owner.workspaceId, { name: "the leaver's", expiresInDays: 30 });
    const revoked = await makeKey(owner, owner.workspaceId, { name: 'revoked', expiresInDays: 30 });
    await owner.json('POST', `/api/workspaces/${owner.workspaceId}/keys/${revoked.id}/revoke`);
    expect((await owner.json('DELETE', `/api/organizations/${owner.organizationId}/members/${leaver.account.user.id}`)).status).toBe(200);

    clock.now = () => Date.parse(made.expiresAt!) - 2 * DAY;
    await dailyRun();
    for (const person of [owner, admin]) {
      const sent = await notices(person.account.user.email);
      expect(sent.map((notice) => notice.subject)).toEqual([`Your Sluice API key "the leaver's" expires on ${made.expiresAt!.slice(0, 10)}`]);
      expect(sent[0]!.body).toContain('whoever made the key no longer belongs to it');
    }
    expect(await notices(leaver.account.user.email)).toEqual([]);

    const byOperator = await ops('POST', '/keys', { workspaceId: owner.workspaceId, name: 'by the operator', expiresInDays: 30 });
    clock.now = () => Date.parse(byOperator.body.data.expiresAt) - 2 * DAY;
    await dailyRun();
    const told = (await notices(owner.account.user.email)).find((notice) => notice.subject.includes('by the operator'));
    expect(told?.body).toContain('the key was made by the operator of this installation, not by a member');
  });
});
