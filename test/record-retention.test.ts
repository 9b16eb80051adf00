import { createExecutionContext, createScheduledController, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import worker from '../src/api';
import { clock } from '../src/core/clock';
import { overLimitBy } from '../src/core/throttle';
import { beginAuthorization } from '../src/services/oauth/authorization';
import { listConnectedClients } from '../src/services/oauth/grants';
import { pruneEndedRecords } from '../src/services/record-retention';
import { connect, registerClient } from './mcp-oauth/support';
import { signUp, type Person } from './support/dashboard';
import { rowsReadBy } from './support/rows-read';
import { keptNightly } from './support/nightly';

afterEach(() => {
  vi.restoreAllMocks();
});

const DAY = 24 * 60 * 60 * 1000;
/** "Now" for the cases: 13 months back is 2026-11-15T00:00Z, where runtime hours and Stripe's events end. */
const NOW = Date.UTC(2027, 11, 15, 9, 30);
const iso = (instant: number) => new Date(instant).toISOString();

/**
 * One kind of record: a row written as ending at `endedAt` by the rule's own measure (an expiry, a window's start,
 * a registration), and the statement that finds it by id. `after` is how long past that instant the run deletes it.
 */
interface Case {
  kind: string;
  after: number;
  table: string;
  seed: (person: Person, id: string, endedAt: number) => Promise<unknown>;
}

const sql = (query: string, ...values: unknown[]) =>
  env.DB.prepare(query)
    .bind(...values)
    .run();

/** A grant of the person's workspace, its code exchanged or not, its 30 days ending at `expiresAt`. */
const grant = (person: Person, id: string, { expiresAt, codeExpiresAt = expiresAt - 30 * DAY + 60_000, exchanged = true }: { expiresAt: number; codeExpiresAt?: number; exchanged?: boolean }) =>
  sql(
    `INSERT INTO oauth_grants (id, client_id, workspace_id, user_id, resource, scope, redirect_uri, code_hash, code_challenge, code_expires_at, code_used_at, created_at, expires_at)
     VALUES (?1, 'oac_retention', ?2, ?3, 'http://mcp.test/mcp', 'mcp', 'http://127.0.0.1/cb', 'code_' || ?1, 'challenge', ?4, ?5, ?6, ?7)`,
    id,
    person.workspaceId,
    person.account.user.id,
    codeExpiresAt,
    exchanged ? codeExpiresAt - 30_000 : null,
    iso(expiresAt - 30 * DAY),
    expiresAt,
  );

/** A key row as the daily run finds it: its scope and instants (ms), no usable secret. */
const storedKey = (workspaceId: string, id: string, key: { scope: string; createdAt: number; revokedAt?: number; expiresAt?: number }) =>
  sql(
    "INSERT INTO api_keys (id, workspace_id, key_hash, key_ciphertext, key_hint, scope, name, created_at, revoked_at, expires_at) VALUES (?1, ?2, 'hash_' || ?1, 'x', 'hint', ?3, 'stored', ?4, ?5, ?6)",
    id, workspaceId, key.scope, iso(key.createdAt), key.revokedAt === undefined ? null : iso(key.revokedAt), key.expiresAt === undefined ? null : iso(key.expiresAt),
  );

const CASES: Case[] = [
  {
    kind: 'a session past its expiry',
    after: 0,
    table: 'sessions',
    seed: (person, id, at) => sql("INSERT INTO sessions (id_hash, user_id, created_at, expires_at) VALUES (?, ?, '2027-01-01T00:00:00.000Z', ?)", id, person.account.user.id, iso(at)),
  },
  {
    kind: 'an email confirmation link past its expiry',
    after: 0,
    table: 'email_verifications',
    seed: (person, id, at) => sql("INSERT INTO email_verifications (token_hash, user_id, email, expires_at) VALUES (?, ?, 'a@example.com', ?)", id, person.account.user.id, iso(at)),
  },
  {
    kind: 'an email change link past its expiry',
    after: 0,
    table: 'email_changes',
    seed: (person, id, at) => sql("INSERT INTO email_changes (token_hash, user_id, old_email, new_email, expires_at) VALUES (?, ?, 'a@example.com', 'b@example.com', ?)", id, person.account.user.id, iso(at)),
  },
  {
    kind: 'a sign-in that waited for its second factor past its expiry',
    after: 0,
    table: 'sign_in_challenges',
    seed: (person, id, at) => sql("INSERT INTO sign_in_challenges (id_hash, user_id, password_digest, expires_at) VALUES (?, ?, 'digest', ?)", id, person.account.user.id, iso(at)),
  },
  {
    kind: 'a password reset link past its expiry',
    after: 0,
    table: 'password_resets',
    seed: (person, id, at) => sql("INSERT INTO password_resets (token_hash, user_id, email, expires_at) VALUES (?, ?, 'a@example.com', ?)", id, person.account.user.id, iso(at)),
  },
  {
    kind: "an attempt count a day after its window started (the longest rule's window)",
    after: DAY,
    table: 'auth_throttle',
    seed: (_person, id, at) => sql('INSERT INTO auth_throttle (bucket, window_start, attempts) VALUES (?, ?, 3)', id, at),
  },
  {
    kind: 'an authorization request no one decided',
    after: 0,
    table: 'oauth_requests',
    seed: (_person, id, at) =>
      sql("INSERT INTO oauth_requests (id_hash, client_id, redirect_uri, code_challenge, resource, scope, expires_at) VALUES (?, 'oac_x', 'http://127.0.0.1/cb', 'c', 'r', 'mcp', ?)", id, at),
  },
  {
    kind: 'an OAuth token past its expiry',
    after: 0,
    table: 'oauth_tokens',
    seed: async (person, id, at) => {
      await grant(person, `grant_of_${id}`, { expiresAt: NOW + 10 * DAY });
      return sql("INSERT INTO oauth_tokens (hash, grant_id, kind, expires_at, used_at) VALUES (?, ?, 'refresh', ?, 1)", id, `grant_of_${id}`, at);
    },
  },
  {
    kind: 'a consent whose code was never exchanged',
    after: 0,
    table: 'oauth_grants',
    seed: (person, id, at) => grant(person, id, { expiresAt: at + 30 * DAY, codeExpiresAt: at, exchanged: false }),
  },
  {
    kind: 'an OAuth grant 30 days past its end',
    after: 30 * DAY,
    table: 'oauth_grants',
    seed: (person, id, at) => grant(person, id, { expiresAt: at }),
  },
  {
    kind: 'a registered client no grant names, 30 days after registering',
    after: 30 * DAY,
    table: 'oauth_clients',
    seed: (_person, id, at) => sql("INSERT INTO oauth_clients (id, name, redirect_uris, from_document, created_at) VALUES (?, 'A client', '[]', 0, ?)", id, iso(at)),
  },
  {
    kind: "a client metadata document past its cache lifetime that no grant names",
    after: 0,
    table: 'oauth_clients',
    seed: (_person, id, at) => sql("INSERT INTO oauth_clients (id, name, redirect_uris, from_document, created_at, expires_at) VALUES (?, 'A client', '[]', 1, '2027-01-01', ?)", id, at),
  },
  {
    kind: 'an invitation 90 days past its expiry',
    after: 90 * DAY,
    table: 'invitations',
    seed: (person, id, at) =>
      sql(
        "INSERT INTO invitations (id, organization_id, email, role, token_hash, invited_by, created_at, expires_at, accepted_at) VALUES (?1, ?2, 'b@example.com', 'member', 'hash_' || ?1, ?3, ?4, ?5, ?4)",
        id,
        person.account.organization.id,
        person.account.user.id,
        iso(at - 7 * DAY),
        iso(at),
      ),
  },
  {
    kind: 'a development outbox message 30 days old',
    after: 30 * DAY,
    table: 'email_outbox',
    seed: (_person, id, at) => sql("INSERT INTO email_outbox (id, recipient, subject, body, created_at) VALUES (?, 'c@example.com', 's', 'b', ?)", id, iso(at)),
  },
  {
    kind: 'an onboarding intent older than 90 days',
    after: 90 * DAY,
    table: 'onboarding_intents',
    seed: (person, id, at) =>
      sql(
        "INSERT INTO onboarding_intents (id, surface, agent_name, use_case, sources, workspace_id, organization_id, created_at) VALUES (?, 'mcp', 'agent', 'use', '[]', ?, ?, ?)",
        id,
        person.workspaceId,
        person.account.organization.id,
        iso(at),
      ),
  },
  {
    kind: 'an API key revoked before the usage rows kept (13 months)',
    after: NOW - Date.UTC(2026, 10, 15),
    table: 'api_keys',
    seed: (person, id, at) => storedKey(person.workspaceId, id, { scope: 'workspace', createdAt: at - 30 * DAY, revokedAt: at }),
  },
  {
    kind: 'an API key that expired before the usage rows kept (13 months), never revoked',
    after: NOW - Date.UTC(2026, 10, 15),
    table: 'api_keys',
    seed: (person, id, at) => storedKey(person.workspaceId, id, { scope: 'workspace', createdAt: at - 30 * DAY, expiresAt: at }),
  },
  {
    kind: 'an MCP token that expired before the usage rows kept (13 months), never revoked',
    after: NOW - Date.UTC(2026, 10, 15),
    table: 'api_keys',
    seed: (person, id, at) => storedKey(person.workspaceId, id, { scope: 'workspace_mcp', createdAt: at - 30 * DAY, expiresAt: at }),
  },
  {
    kind: 'a sandbox key 30 days past its expiry',
    after: 30 * DAY,
    table: 'api_keys',
    seed: (person, id, at) => storedKey(person.workspaceId, id, { scope: 'workspace_dryrun', createdAt: at - 7 * DAY, expiresAt: at }),
  },
  {
    kind: "an agent's runtime hour older than 13 months",
    after: NOW - Date.UTC(2026, 10, 15),
    table: 'agent_hours',
    seed: async (person, id, at) => {
      await sql(
        "INSERT INTO agents (id, organization_id, workspace_id, name, status, created_at, deployed_at) VALUES (?, ?, ?, 'agent', 'stopped', '2026-01-01', '2026-01-01')",
        id,
        person.account.organization.id,
        person.workspaceId,
      );
      return sql('INSERT INTO agent_hours (agent_id, hour, organization_id) VALUES (?, ?, ?)', id, iso(at), person.account.organization.id);
    },
  },
  {
    kind: 'an agent stopped before the usage rows kept (13 months)',
    after: NOW - Date.UTC(2026, 10, 15),
    table: 'agents',
    seed: (person, id, at) =>
      sql(
        "INSERT INTO agents (id, organization_id, workspace_id, name, status, created_at, deployed_at, stopped_at) VALUES (?1, ?2, ?3, 'agent', 'stopped', ?4, ?4, ?5)",
        id,
        person.account.organization.id,
        person.workspaceId,
        iso(at - DAY),
        iso(at),
      ),
  },
  {
    kind: "a data job's runtime hour older than 13 months",
    after: NOW - Date.UTC(2026, 10, 15),
    table: 'job_hours',
    seed: async (person, id, at) => {
      await sql(
        "INSERT INTO data_jobs (id, organization_id, workspace_id, operation, status, items, quoted_units, created_at) VALUES (?, ?, ?, 'web/scrape', 'succeeded', 1, 0, '2026-01-01')",
        id,
        person.account.organization.id,
        person.workspaceId,
      );
      return sql('INSERT INTO job_hours (job_id, hour, organization_id) VALUES (?, ?, ?)', id, iso(at), person.account.organization.id);
    },
  },
  {
    kind: "an organization's activity older than 400 days",
    after: 400 * DAY,
    table: 'activity',
    seed: (person, id, at) => sql("INSERT INTO activity (organization_id, action, target, created_at) VALUES (?, 'key.created', ?, ?)", person.account.organization.id, id, iso(at)),
  },
  {
    kind: "a Stripe event older than 13 months",
    after: NOW - Date.UTC(2026, 10, 15),
    table: 'stripe_events',
    seed: (_person, id, at) => sql("INSERT INTO stripe_events (id, type, received_at) VALUES (?, 'checkout.session.completed', ?)", id, iso(at)),
  },
];

/** The column each table's rows are found by in these cases (an hour by its agent or job, one each). */
const ID_COLUMN: Record<string, string> = { sessions: 'id_hash', email_verifications: 'token_hash', password_resets: 'token_hash', email_changes: 'token_hash', sign_in_challenges: 'id_hash', activity: 'target', auth_throttle: 'bucket', oauth_requests: 'id_hash', oauth_tokens: 'hash', agent_hours: 'agent_id', job_hours: 'job_id' };

async function present(table: string, id: string): Promise<boolean> {
  return (await env.DB.prepare(`SELECT 1 FROM ${table} WHERE ${ID_COLUMN[table] ?? 'id'} = ?`).bind(id).first()) !== null;
}

describe('account records whose life has ended', () => {
  it.each(CASES)('$kind goes in the daily run, and one a minute short of it stays', async ({ after, table, seed }) => {
    const person = await signUp();
    const suffix = crypto.randomUUID().slice(0, 8);
    const margin = 60_000;
    const gone = `gone_${suffix}`;
    const kept = `kept_${suffix}`;
    await seed(person, gone, NOW - after - margin);
    await seed(person, kept, NOW - after + margin);
    expect([await present(table, gone), await present(table, kept)]).toEqual([true, true]);

    vi.spyOn(clock, 'now').mockReturnValue(NOW);
    // Through the api's cron handler, as Cloudflare runs it each night.
    const context = createExecutionContext();
    await worker.scheduled(createScheduledController({ scheduledTime: NOW, cron: '5 0 * * *' }), keptNightly().bindings, context);
    await waitOnExecutionContext(context);
    expect([await present(table, gone), await present(table, kept)]).toEqual([false, true]);
  });

  it("keeps a client while a grant names it, and once its grants are gone tells a returning client how to register again", async () => {
    const person = await signUp();
    const connected = await connect(person);
    const started = Date.now();
    // 61 days on: the grant ended at 30 and was kept 30 more; the client was registered more than 30 days before.
    const grantGone = started + 61 * DAY;
    expect(await listConnectedClients(env.DB, person.workspaceId)).toHaveLength(1);
    await pruneEndedRecords(env.DB, started + 31 * DAY);
    // Its grant has ended but is kept, so the client is too.
    expect(await env.DB.prepare('SELECT id FROM oauth_clients WHERE id = ?').bind(connected.clientId).first()).not.toBeNull();
    expect(await env.DB.prepare('SELECT COUNT(*) AS n FROM oauth_grants WHERE client_id = ?').bind(connected.clientId).first('n')).toBe(1);

    await pruneEndedRecords(env.DB, grantGone);
    expect(await env.DB.prepare('SELECT COUNT(*) AS n FROM oauth_grants WHERE client_id = ?').bind(connected.clientId).first('n')).toBe(0);
    expect(await env.DB.prepare('SELECT COUNT(*) AS n FROM oauth_tokens t WHERE NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.id = t.grant_id)').first('n')).toBe(0);
    expect(await env.DB.prepare('SELECT id FROM oauth_clients WHERE id = ?').bind(connected.clientId).first()).toBeNull();

    const outcome = await beginAuthorization(
      { DB: env.DB, MCP_URL: env.MCP_URL, APP_URL: env.APP_URL },
      new URLSearchParams({ client_id: connected.clientId, response_type: 'code', redirect_uri: 'http://127.0.0.1:53682/callback' }),
    );
    expect(outcome).toMatchObject({ problem: { error: 'invalid_client', description: expect.stringMatching(/removed once no connection has used it for 30 days or more: remove this server from your MCP client and add it again/) } });
  });

  it("keeps a registered client that has a grant in force however old its registration", async () => {
    const person = await signUp();
    const old = await registerClient();
    await env.DB.prepare('UPDATE oauth_clients SET created_at = ? WHERE id = ?').bind(iso(Date.now() - 400 * DAY), old).run();
    await grant(person, `grant_${old}`, { expiresAt: Date.now() + 10 * DAY });
    await env.DB.prepare('UPDATE oauth_grants SET client_id = ? WHERE id = ?').bind(old, `grant_${old}`).run();
    await pruneEndedRecords(env.DB);
    expect(await env.DB.prepare('SELECT id FROM oauth_clients WHERE id = ?').bind(old).first()).not.toBeNull();
  });

  it('keeps a registered client, however old, while a person is on its consent page', async () => {
    const old = await registerClient();
    await env.DB.prepare('UPDATE oauth_clients SET created_at = ? WHERE id = ?').bind(iso(Date.now() - 400 * DAY), old).run();
    await sql(
      "INSERT INTO oauth_requests (id_hash, client_id, redirect_uri, code_challenge, resource, scope, expires_at) VALUES (?, ?, 'http://127.0.0.1/cb', 'c', 'r', 'mcp', ?)",
      `request_${old}`,
      old,
      Date.now() + 5 * 60_000,
    );
    await pruneEndedRecords(env.DB);
    expect(await env.DB.prepare('SELECT id FROM oauth_clients WHERE id = ?').bind(old).first()).not.toBeNull();
    // Once the request has expired and gone, so does the client.
    await pruneEndedRecords(env.DB, Date.now() + 10 * 60_000);
    expect(await env.DB.prepare('SELECT id FROM oauth_clients WHERE id = ?').bind(old).first()).toBeNull();
  });

  it('reads what it deletes, not the live sessions beside them', async () => {
    const person = await signUp();
    const addSessions = (count: number, prefix: string, expiresAt: number) =>
      env.DB.prepare(
        `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?1 - 1)
         INSERT INTO sessions (id_hash, user_id, created_at, expires_at) SELECT ?2 || i, ?3, '2027-01-01T00:00:00.000Z', ?4 FROM n`,
      )
        .bind(count, prefix, person.account.user.id, iso(expiresAt))
        .run();
    await addSessions(3_000, 'live_', NOW + DAY);
    await addSessions(10, 'ended_', NOW - DAY);
    const { answer, rows } = await rowsReadBy((db) => pruneEndedRecords(db, NOW));
    expect(answer['sessions past their expiry']).toBeGreaterThanOrEqual(10);
    // By the table it read the 3,000 live sessions (and every other table whole); by the indexes a few per rule.
    expect(rows).toBeLessThan(200);
  });

  it("deletes an agent's keys of deployments before, revoked 13 months back, and keeps the one a stopped agent still names", async () => {
    const person = await signUp();
    const suffix = crypto.randomUUID().slice(0, 8);
    const longAgo = Date.UTC(2026, 9, 1);
    const [earlier, last] = [`key_earlier_${suffix}`, `key_last_${suffix}`];
    for (const id of [earlier, last]) await storedKey(person.workspaceId, id, { scope: 'agent', createdAt: longAgo, revokedAt: longAgo });
    // Stopped within the 13 months (its key revoked before: a key is never deleted while an agent names it, whatever the dates).
    await sql(
      "INSERT INTO agents (id, organization_id, workspace_id, name, status, key_id, created_at, deployed_at, stopped_at) VALUES (?1, ?2, ?3, 'old agent', 'stopped', ?4, ?5, ?5, ?6)",
      `agt_${suffix}`, person.organizationId, person.workspaceId, last, iso(longAgo), iso(NOW - DAY),
    );
    await pruneEndedRecords(env.DB, NOW);
    expect([await present('api_keys', earlier), await present('api_keys', last), await present('agents', `agt_${suffix}`)]).toEqual([false, true, true]);
  });

  it('deletes an agent stopped 13 months back with its last key the same night, once its runtime hours are gone', async () => {
    const person = await signUp();
    const suffix = crypto.randomUUID().slice(0, 8);
    const longAgo = Date.UTC(2026, 9, 1);
    const [key, agent] = [`key_last_${suffix}`, `agt_${suffix}`];
    await storedKey(person.workspaceId, key, { scope: 'agent', createdAt: longAgo, revokedAt: longAgo });
    await sql(
      "INSERT INTO agents (id, organization_id, workspace_id, name, status, key_id, created_at, deployed_at, stopped_at) VALUES (?1, ?2, ?3, 'old agent', 'stopped', ?4, ?5, ?5, ?5)",
      agent, person.organizationId, person.workspaceId, key, iso(longAgo),
    );
    await sql('INSERT INTO agent_hours (agent_id, hour, organization_id) VALUES (?, ?, ?)', agent, iso(longAgo), person.organizationId);
    await pruneEndedRecords(env.DB, NOW);
    expect([await present('agents', agent), await present('api_keys', key), await present('agent_hours', agent)]).toEqual([false, false, false]);
  });

  it('refuses a throttle window longer than its counts are kept', async () => {
    await expect(overLimitBy(env.DB, 'too-long', { limit: 3, windowMs: 2 * DAY })).rejects.toThrow(/outlives/);
    expect(await overLimitBy(env.DB, 'a-day', { limit: 3, windowMs: DAY })).toBeNull();
  });
});
