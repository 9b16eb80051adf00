import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { listKeys } from '../src/services/accounts';
import { unfinishedItems } from '../src/services/jobs/store';
import { sha256Hex } from '../src/core/digest';
import { exchangeToken, REFRESH_TOKENS_PER_GRANT } from '../src/services/oauth/tokens';
import { connect } from './mcp-oauth/support';
import { signUp } from './support/dashboard';
import { provision } from './support/api';
import { rowsReadBy } from './support/rows-read';

describe('reads that stay flat as rows pile up', () => {
  it("lists a workspace's keys of one scope reading those keys, not the thousands of job keys beside them", async () => {
    const account = await provision();
    const before = await rowsReadBy((db) => listKeys(db, account.workspaceId, 'workspace'));
    // Every data job mints a key for its run and keeps it revoked: 3,000 jobs' worth.
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 2999)
       INSERT INTO api_keys (id, workspace_id, key_hash, key_ciphertext, key_hint, scope, name, created_at, revoked_at)
       SELECT 'key_job_' || ?1 || '_' || i, ?1, 'hash_' || ?1 || '_' || i, 'x', 'abcd', 'data_job', 'job', datetime('now'), datetime('now') FROM n`,
    )
      .bind(account.workspaceId)
      .run();
    const after = await rowsReadBy((db) => listKeys(db, account.workspaceId, 'workspace'));
    expect(after.answer.map((key) => key.id)).toEqual(before.answer.map((key) => key.id));
    expect(after.answer.length).toBeGreaterThan(0);
    // The index's walk may touch a neighbour where it ends; by the workspace alone it read all 3,000 more.
    expect(after.rows).toBeLessThanOrEqual(before.rows + 2);
  });

  it("sums a workspace's unfinished items reading its unfinished jobs, not every job it ever ran", async () => {
    const account = await provision();
    const addJobs = (count: number, status: string, items: number) =>
      env.DB.prepare(
        `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?3 - 1)
         INSERT INTO data_jobs (id, organization_id, workspace_id, operation, status, items, succeeded, quoted_units, created_at)
         SELECT 'job_' || ?4 || '_' || ?2 || '_' || i, ?1, ?2, 'web/scrape', ?4, ?5, 1, 0, datetime('now') FROM n`,
      )
        .bind(account.organizationId, account.workspaceId, count, status, items)
        .run();
    await addJobs(2, 'running', 10);
    const before = await rowsReadBy((db) => unfinishedItems(db, account.workspaceId));
    expect(before.answer).toBe(2 * 9);
    await addJobs(3_000, 'succeeded', 1);
    const after = await rowsReadBy((db) => unfinishedItems(db, account.workspaceId));
    expect(after.answer).toBe(2 * 9);
    expect(after.rows).toBeLessThanOrEqual(before.rows + 2);
  });

  it("refreshes an OAuth grant reading its expired access tokens, not the used refresh tokens a month of refreshes kept before they were bounded", async () => {
    const tokens = await connect(await signUp());
    const refreshed = async (refreshToken: string) =>
      rowsReadBy(async (db) => (await exchangeToken(db, new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: tokens.clientId }))) as { refresh_token: string });
    const before = await refreshed(tokens.refresh_token);
    // A month of refreshes every 15 minutes: each left its refresh token, used, to recognise a replay.
    const grant = await env.DB.prepare('SELECT grant_id AS id FROM oauth_tokens WHERE hash = ?').bind(await sha256Hex(before.answer.refresh_token)).first<{ id: string }>();
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 2879)
       INSERT INTO oauth_tokens (hash, grant_id, kind, expires_at, used_at) SELECT 'used_' || ?1 || '_' || i, ?1, 'refresh', ?2, ?3 FROM n`,
    )
      .bind(grant!.id, Date.now() + 86_400_000, Date.now())
      .run();
    // The next refresh lets them go (a grant keeps its newest REFRESH_TOKENS_PER_GRANT refresh tokens), reading them once.
    const trimming = await refreshed(before.answer.refresh_token);
    const left = await env.DB.prepare("SELECT COUNT(*) AS n FROM oauth_tokens WHERE grant_id = ? AND kind = 'refresh'").bind(grant!.id).first<{ n: number }>();
    expect(left!.n).toBe(REFRESH_TOKENS_PER_GRANT);
    // From then on a refresh reads as many rows however many came before it (once the grant holds its newest
    // access and refresh tokens): the 10th after and the 30th read the same.
    let latest = trimming;
    const rows: number[] = [];
    for (let refresh = 0; refresh < 30; refresh++) {
      latest = await refreshed(latest.answer.refresh_token);
      rows.push(latest.rows);
    }
    expect(rows[29]).toBeLessThanOrEqual(rows[9]! + 2);
    expect(rows[29]).toBeLessThan(trimming.rows / 10);
  });
});
