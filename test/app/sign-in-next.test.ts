import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { dashboard, signUp } from '../support/dashboard';
import { authorizeRequest, pkce, registerClient } from '../mcp-oauth/support';

/** A pending authorization request, as an MCP client's /oauth/authorize leaves one: the consent page's path. */
async function consentPath(clientName = 'Next test client'): Promise<string> {
  const response = await authorizeRequest({ client_id: await registerClient({ client_name: clientName }), code_challenge: (await pkce()).challenge });
  const location = new URL(response.headers.get('location')!);
  return `${location.pathname}${location.search}`;
}

function page(path: string, cookie?: string) {
  return dashboard(path, { redirect: 'manual', headers: cookie ? { cookie: `sluice_session=${cookie}` } : {} });
}

describe('where sign-in and sign-up go afterwards (?next=)', () => {
  const offOrigin = ['//evil.example', 'https://evil.example', '/\\evil.example', '/\t/evil.example', 'javascript:alert(1)'];

  it.each(offOrigin)('drops a next of %j that leaves the site, signed in or not', async (next) => {
    const person = await signUp();
    for (const path of ['/signin', '/signup']) {
      const anonymous = await page(`${path}?next=${encodeURIComponent(next)}`);
      expect(anonymous.status).toBe(303);
      expect(anonymous.headers.get('location')).toBe(path);
      const signedIn = await page(`${path}?next=${encodeURIComponent(next)}`, person.cookie);
      expect(signedIn.headers.get('location')).toBe(path);
    }
    // Without it, the page's forms go home.
    expect(await (await page('/signin')).text()).toContain('data-then="go:/"');
  });

  it('carries a path of this site through sign-in, sign-up and the links between them', async () => {
    const next = '/w/ws_000000000000000000000000/keys';
    const signIn = await (await page(`/signin?next=${encodeURIComponent(next)}`)).text();
    expect(signIn).toContain(`data-then="go:${next}"`);
    expect(signIn).toContain(`href="/signup?next=${encodeURIComponent(next)}"`);
    const signUpPage = await (await page(`/signup?next=${encodeURIComponent(next)}`)).text();
    expect(signUpPage).toContain(`data-then="go:${next}"`);
    expect(signUpPage).toContain(`href="/signin?next=${encodeURIComponent(next)}"`);

    const person = await signUp();
    const signedIn = await page(`/signup?next=${encodeURIComponent(next)}`, person.cookie);
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('location')).toBe(next);
  });

  it('names the MCP client and its redirect host when next is a pending consent request, and nothing when it is unknown', async () => {
    const consent = await consentPath('Claude Desktop');
    expect((await page(consent)).headers.get('location')).toBe(`/signin?next=${encodeURIComponent(consent)}`);
    for (const path of ['/signin', '/signup']) {
      const html = await (await page(`${path}?next=${encodeURIComponent(consent)}`)).text();
      expect(html).toMatch(/to connect <strong>Claude Desktop<\/strong>, which will receive access at <code>127\.0\.0\.1:53682<\/code>/);
    }
    const unknown = await (await page(`/signin?next=${encodeURIComponent(`/oauth/consent?request=sluice_oar_${'0'.repeat(64)}`)}`)).text();
    expect(unknown).not.toContain('data-connecting');
    expect(unknown).toContain(`data-then="go:/oauth/consent?request=sluice_oar_${'0'.repeat(64)}"`);
  });
});

describe('the consent page of an organization without a plan', () => {
  it('says so and offers its owner the free trial; once on the trial it says nothing, and Allow stays possible throughout', async () => {
    const person = await signUp();
    const consent = await consentPath();
    const before = await (await person.request('GET', consent)).text();
    expect(before).toContain('This organization has no plan yet');
    expect(before).toContain(`data-api="/api/organizations/${person.organizationId}/trial"`);
    expect(before).toMatch(/<button type="submit" name="decision" value="allow">/);

    expect((await person.request('POST', `/api/organizations/${person.organizationId}/trial`)).status).toBe(201);
    const after = await (await person.request('GET', consent)).text();
    expect(after).not.toContain('no plan yet');
    expect(after).toMatch(/<button type="submit" name="decision" value="allow">/);
  });

  it('names each organization without a plan when there is a choice, linking a member who may not start the trial to Plans', async () => {
    const owner = await signUp();
    const member = await signUp();
    await env.DB.prepare("INSERT INTO memberships (organization_id, user_id, role, created_at) VALUES (?, ?, 'member', ?)")
      .bind(owner.organizationId, member.account.user.id, new Date().toISOString())
      .run();
    // Names as the page writes them: an organization is "<name>'s organization".
    const [own, theirs] = (await member.json('GET', '/api/me')).body.data.organizations.map((organization: { name: string }) => organization.name.replaceAll("'", '&#39;'));
    const html = await (await member.request('GET', await consentPath())).text();
    expect(html).toContain(`${own} has no plan yet</strong>: start the free trial`);
    expect(html).toContain(`data-api="/api/organizations/${member.organizationId}/trial"`);
    expect(html).toContain(`${theirs} has no plan yet</strong>: see <a href="/w/${owner.workspaceId}/plans" target="_blank" rel="noopener">Plans</a>`);
    expect(html).not.toContain(`data-api="/api/organizations/${owner.organizationId}/trial"`);
    expect(html).toContain(', no plan)</option>');
  });
});
