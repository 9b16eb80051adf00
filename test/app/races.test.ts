import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { invite } from '../../src/app/invitations';
import { ApiError } from '../../src/core/errors';
import { findAgent, redeployAgent } from '../../src/services/agents';
import { createConnection, recheckConnection } from '../../src/services/connections';
import { CONNECTABLE_VENDORS } from '../../src/services/connections-vendors';
import { createDatabase } from '../../src/services/databases';
import { termsOf } from '../../src/services/plan-caps';
import { createEndpoint, deliveryTarget, rotateSecret, updateEndpoint } from '../../src/services/webhooks/endpoints';
import { FAKE_RECEIVER } from '../fakes/webhook-receiver';
import { ops, provision } from '../support/api';
import { signUp } from '../support/dashboard';
import { interceptedDb, meetingOf } from '../support/intercepted-db';

/**
 * D1 where, around the statement that counts and inserts into `table`, two other requests land: one that takes
 * the last place just before it (so it finds no room), one that frees a place just after it (so a count read
 * next finds room again). What the insert found decides: the create is refused, not answered as if stored.
 */
function racingDb(table: string, takesLastPlace: D1PreparedStatement, freesAPlace: D1PreparedStatement): D1Database {
  return interceptedDb(
    (query) => query.trimStart().startsWith(`INSERT INTO ${table} `),
    (bound) => ({
      run: async () => {
        await takesLastPlace.run();
        const answer = await bound.run();
        await freesAPlace.run();
        return answer;
      },
    }),
  );
}

const hunter = CONNECTABLE_VENDORS.find((vendor) => vendor.slug === 'hunter')!;

/** A workspace database's object, as the service reaches it. */
function objectOf(databaseId: string) {
  return env.WORKSPACE_DATABASE.get(env.WORKSPACE_DATABASE.idFromName(databaseId));
}

async function refusal(attempt: Promise<unknown>): Promise<{ status: number; code: string }> {
  const error = await attempt.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error, 'answered as if it had been done').toBeInstanceOf(ApiError);
  return { status: (error as ApiError).status, code: (error as ApiError).code };
}

async function capped(organizationId: string, caps: Record<string, number>) {
  expect((await ops('PUT', `/organizations/${organizationId}/plan`, { plan: 'payg', caps })).status).toBe(200);
}

describe('a create another request lands in the middle of is refused, never answered as if it were stored', () => {
  it('a workspace database: 402, and no database that is not listed', async () => {
    const account = await provision({ plan: 'payg' });
    await capped(account.organizationId, { databases: 1 });
    const insertRow = (id: string) =>
      env.DB.prepare("INSERT INTO workspace_databases (id, organization_id, workspace_id, name, created_at) VALUES (?, ?, ?, ?, '2026-01-01T00:00:00.000Z')").bind(id, account.organizationId, account.workspaceId, id);
    const db = racingDb('workspace_databases', insertRow('db_rival'), env.DB.prepare("DELETE FROM workspace_databases WHERE id = 'db_rival'"));

    const owner = { organizationId: account.organizationId, workspaceId: account.workspaceId };
    expect(await refusal(createDatabase({ ...env, DB: db } as never, owner, 'ghost'))).toEqual({ status: 402, code: 'PLAN_LIMIT_REACHED' });
    expect((await env.DB.prepare('SELECT COUNT(*) AS n FROM workspace_databases WHERE organization_id = ?').bind(account.organizationId).first<{ n: number }>())!.n).toBe(0);
  });

  it('a workspace database deleted between its row and its opening: 409, and its object goes too (no database answers that no list reaches)', async () => {
    const account = await provision({ plan: 'payg' });
    let id = '';
    // The delete lands just after the row: it finds the object not yet opened, so it removes the row alone.
    const db = interceptedDb(
      (query) => query.trimStart().startsWith('INSERT INTO workspace_databases '),
      (bound, values) => ({
        run: async () => {
          const answer = await bound.run();
          id = values[0] as string;
          expect(await objectOf(id).destroy(account.workspaceId)).toBe(false);
          await env.DB.prepare('DELETE FROM workspace_databases WHERE id = ?').bind(id).run();
          return answer;
        },
      }),
    );
    const owner = { organizationId: account.organizationId, workspaceId: account.workspaceId };
    expect(await refusal(createDatabase({ ...env, DB: db } as never, owner, 'fleeting'))).toEqual({ status: 409, code: 'CONFLICT' });
    expect(await objectOf(id).describe(account.workspaceId)).toBeNull();
  });

  it('an invitation: 402 SEAT_LIMIT_REACHED, not a link to one never stored', async () => {
    const person = await signUp();
    await capped(person.organizationId, { seats: 2 });
    const rival = env.DB.prepare(
      "INSERT INTO invitations (id, organization_id, email, role, token_hash, invited_by, created_at, expires_at) VALUES ('inv_rival', ?, 'rival@example.com', 'member', 'rival', ?, '2026-01-01T00:00:00.000Z', '2999-01-01T00:00:00.000Z')",
    ).bind(person.organizationId, person.account.user.id);
    const db = racingDb('invitations', rival, env.DB.prepare("DELETE FROM invitations WHERE id = 'inv_rival'"));

    const input = { organizationId: person.organizationId, email: 'ghost@example.com', role: 'member' as const, invitedBy: person.account.user.id };
    expect(await refusal(invite(db, await termsOf(env.DB, person.organizationId), input))).toEqual({ status: 402, code: 'SEAT_LIMIT_REACHED' });
    expect(await env.DB.prepare("SELECT id FROM invitations WHERE email = 'ghost@example.com'").first()).toBeNull();
  });

  it('an invitation to an address invited at the same moment: 409, one invitation holding one seat', async () => {
    const person = await signUp();
    await capped(person.organizationId, { seats: 5 });
    // Both look for a pending invitation to the address before either has written one.
    const meeting = meetingOf(2);
    const db = interceptedDb(
      (query) => query.startsWith('SELECT id FROM invitations WHERE organization_id = ? AND email = ?'),
      (bound) => ({ first: async () => (await meeting.arrive(), bound.first()) }),
    );
    const terms = await termsOf(env.DB, person.organizationId);
    const input = { organizationId: person.organizationId, email: 'twice@example.com', role: 'member' as const, invitedBy: person.account.user.id };
    const answers = await Promise.all([invite(db, terms, input), invite(db, terms, input)].map((attempt) => attempt.then(() => 'sent', (error: ApiError) => error.code)));
    expect(answers.sort()).toEqual(['CONFLICT', 'sent']);
    const stored = await env.DB.prepare("SELECT COUNT(*) AS n FROM invitations WHERE organization_id = ? AND email = 'twice@example.com'").bind(person.organizationId).first<{ n: number }>();
    expect(stored!.n).toBe(1);
  });

  it('a workspace: 402, not the id of a workspace that does not exist', async () => {
    const person = await signUp();
    await capped(person.organizationId, { workspaces: 2 });
    const rival = env.DB.prepare("INSERT INTO workspaces (id, organization_id, name, created_at) VALUES (?, ?, 'Rival', '2026-01-01T00:00:00.000Z')").bind(`ws_rival_${person.organizationId}`, person.organizationId);
    const db = racingDb('workspaces', rival, env.DB.prepare('DELETE FROM workspaces WHERE id = ?').bind(`ws_rival_${person.organizationId}`));

    const answer = await person.json('POST', `/api/organizations/${person.organizationId}/workspaces`, { name: 'Ghost' }, { bindings: { DB: db } });
    expect([answer.status, answer.body.error?.code]).toEqual([402, 'PLAN_LIMIT_REACHED']);
    expect(await env.DB.prepare("SELECT id FROM workspaces WHERE organization_id = ? AND name = 'Ghost'").bind(person.organizationId).first()).toBeNull();
  });
});

describe('a change whose row was deleted while it was being made answers 404, not the change', () => {
  /** D1 where the row goes just before `update` writes it, as a DELETE landing meanwhile would take it. */
  function deletedBefore(update: string, remove: D1PreparedStatement): D1Database {
    return interceptedDb(
      (query) => query.startsWith(update),
      (bound) => ({
        run: async () => {
          await remove.run();
          return bound.run();
        },
      }),
    );
  }

  it("a webhook endpoint's change (its new URL was being checked)", async () => {
    const account = await provision();
    const endpoint = await createEndpoint(env as never, account.workspaceId, { url: `${FAKE_RECEIVER}/ok/${crypto.randomUUID()}`, events: ['key.created'] });
    const db = deletedBefore('UPDATE webhook_endpoints SET', env.DB.prepare('DELETE FROM webhook_endpoints WHERE id = ?').bind(endpoint.id));
    expect(await refusal(updateEndpoint({ ...env, DB: db } as never, account.workspaceId, endpoint.id, { events: ['key.revoked'] }))).toEqual({ status: 404, code: 'NOT_FOUND' });
  });

  it("a webhook endpoint's rotation another rotation lands in the middle of: 409, and the other's secret is the one that signs", async () => {
    const account = await provision();
    const endpoint = await createEndpoint(env as never, account.workspaceId, { url: `${FAKE_RECEIVER}/ok/${crypto.randomUUID()}`, events: ['key.created'] });
    let rival: string | undefined;
    const db = interceptedDb(
      (query) => query.startsWith('UPDATE webhook_endpoints SET secret_ciphertext'),
      (bound) => ({
        run: async () => {
          rival = (await rotateSecret(env as never, account.workspaceId, endpoint.id)).secret;
          return bound.run();
        },
      }),
    );
    expect(await refusal(rotateSecret({ ...env, DB: db } as never, account.workspaceId, endpoint.id))).toEqual({ status: 409, code: 'CONFLICT' });
    expect((await deliveryTarget(env as never, endpoint.id))!.secrets).toEqual([rival, endpoint.secret]);
  });

  it('a stopped agent deployed again as the nightly run deletes it (stopped 13 months back)', async () => {
    const account = await provision({ plan: 'payg' });
    const id = `agt_${crypto.randomUUID().replace(/-/g, '').slice(0, 24)}`;
    await env.DB.prepare("INSERT INTO agents (id, organization_id, workspace_id, name, status, created_at, deployed_at, stopped_at) VALUES (?1, ?2, ?3, 'old', 'stopped', ?4, ?4, ?4)")
      .bind(id, account.organizationId, account.workspaceId, '2025-01-01T00:00:00.000Z')
      .run();
    const agent = (await findAgent(env.DB, id))!;
    const db = deletedBefore("UPDATE agents SET status = 'deployed'", env.DB.prepare('DELETE FROM agents WHERE id = ?').bind(id));
    expect(await refusal(redeployAgent({ ...env, DB: db } as never, agent, null))).toEqual({ status: 404, code: 'NOT_FOUND' });
  });

  it('a connection checked again (its vendor was being asked)', async () => {
    const account = await provision({ plan: 'payg' });
    const settings = env as unknown as Record<string, string>;
    const connection = await createConnection(env as never, account.workspaceId, { vendor: hunter, credentials: Object.fromEntries(hunter.fields.map((field) => [field.name, settings[field.setting]!])) }, AbortSignal.timeout(10_000));
    const db = deletedBefore('UPDATE connections SET status', env.DB.prepare('DELETE FROM connections WHERE id = ?').bind(connection.id));
    expect(await refusal(recheckConnection({ ...env, DB: db } as never, account.workspaceId, connection.id, AbortSignal.timeout(10_000)))).toEqual({ status: 404, code: 'NOT_FOUND' });
  });
});
