import { afterEach, describe, expect, it } from 'vitest';
import { QUERIES_PER_PERSON } from '../../src/app/api/databases';
import { clock } from '../../src/core/clock';
import { join, signUp } from '../support/dashboard';

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

describe('the databases page and its API in the dashboard', () => {
  it("lets a member create a database once the organization has a plan, query it, and see it listed; another organization's reads as 404", async () => {
    const person = await signUp();
    const base = `/api/workspaces/${person.workspaceId}/databases`;
    const noPlan = await person.json('POST', base, { name: 'notes' });
    expect(noPlan.status).toBe(402);
    expect(noPlan.body.error.code).toBe('SUBSCRIPTION_REQUIRED');

    expect((await person.json('POST', `/api/organizations/${person.organizationId}/trial`)).status).toBe(201);
    const created = await person.json('POST', base, { name: 'notes' });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    await person.json('POST', `${base}/query`, { databaseId: id, sql: 'CREATE TABLE notes (body TEXT)' });
    const inserted = await person.json('POST', `${base}/query`, { databaseId: id, sql: 'INSERT INTO notes VALUES (?) RETURNING body', params: ['<b>hello</b>'] });
    expect(inserted.body.data.rows).toEqual([['<b>hello</b>']]);

    const page = await person.request('GET', `/w/${person.workspaceId}/databases`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(id);
    expect(html).toContain('notes');
    expect(html).toContain('data-query-result');

    const stranger = await signUp();
    const theirs = await stranger.json('POST', `/api/workspaces/${stranger.workspaceId}/databases/query`, { databaseId: id, sql: 'SELECT * FROM notes' });
    expect(theirs.status).toBe(404);
    expect((await stranger.json('POST', `${base}/query`, { databaseId: id, sql: 'SELECT * FROM notes' })).status).toBe(404);
  });

  it(`takes ${QUERIES_PER_PERSON.limit} queries a minute from one person's query box, then 429 until the minute is over`, async () => {
    const person = await signUp();
    expect((await person.json('POST', `/api/organizations/${person.organizationId}/trial`)).status).toBe(201);
    const base = `/api/workspaces/${person.workspaceId}/databases`;
    const id = (await person.json('POST', base, { name: 'busy' })).body.data.id;
    const select = () => person.json('POST', `${base}/query`, { databaseId: id, sql: 'SELECT 1' });
    for (let statement = 0; statement < QUERIES_PER_PERSON.limit; statement++) expect((await select()).status).toBe(200);
    const over = await person.request('POST', `${base}/query`, { databaseId: id, sql: 'SELECT 1' });
    expect([over.status, ((await over.json()) as any).error.code]).toEqual([429, 'RATE_LIMITED']);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    // Someone else in the workspace has a count of their own.
    const teammate = await signUp();
    await join(teammate, person.organizationId, 'member');
    expect((await teammate.json('POST', `${base}/query`, { databaseId: id, sql: 'SELECT 1' })).status).toBe(200);
    clock.now = () => realNow() + QUERIES_PER_PERSON.windowMs + 1_000;
    expect((await select()).status).toBe(200);
  });
});
