import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { IDEMPOTENCY_WINDOW_MS, IdempotencyStore, KEPT_BYTES_PER_WORKSPACE } from '../../durable-objects/idempotency-store';
import { FIRST_RETRY_MS, PARKED_RETRY_MS } from '../../durable-objects/lease-book';
import { OrgWallet } from '../../durable-objects/org-wallet';
import { losingSettleAnswers } from '../support/lost-answers';
import { objectRowsReadWhile } from '../support/rows-read';
import { UsageOutbox } from '../../durable-objects/usage-outbox';
import { WorkspaceGate } from '../../durable-objects/workspace-gate';
import { gateOf } from '../../src/services/gate';
import { clock } from '../../src/core/clock';
import { HOLD_GRACE_MS } from '../../src/core/protocols/gate';
import company from '../fixtures/linkedin-data-api/get-company-by-domain.json' with { type: 'json' };
import { call, credit, eventually, funded, json, ops, provision, wallet, type Provisioned } from '../support/api';
import { startAMinute } from '../support/held-minute';

const LINKEDIN_HOST = 'linkedin.fake';
const DAY_MS = 24 * 60 * 60 * 1000;

afterEach(() => {
  vi.restoreAllMocks();
});

/** The company lookup with an Idempotency-Key, as an agent retrying after a timeout sends it. */
function lookup(account: Provisioned, domain: string, idempotencyKey?: string): Promise<Response> {
  return call(`/v1/data/linkedin/get-company-by-domain?domain=${encodeURIComponent(domain)}`, {
    headers: { authorization: `Bearer ${account.key}`, ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }) },
  });
}

/**
 * Counts the worker's calls to the professional-network vendor; while `held`, each waits for `release()`,
 * so a test can keep a first call running while its retries arrive. `answer` replaces the vendor's answer.
 */
function watchUpstream(options: { held?: boolean; answer?: () => Response } = {}) {
  const realFetch = globalThis.fetch;
  let release!: () => void;
  const released = options.held ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve();
  const watched = { calls: 0, release: () => release() };
  vi.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    if (new URL(request.url).hostname !== LINKEDIN_HOST) return realFetch(request);
    watched.calls += 1;
    await released;
    return options.answer ? options.answer() : realFetch(request);
  });
  return watched;
}

/** Captures that took money: a replay, like every success, has its capture too, of nothing. */
async function charges(organizationId: string): Promise<number> {
  const { ledger } = await wallet(organizationId);
  return ledger.filter((entry: { kind: string; purchasedDeltaCents: number; subscriptionDeltaCents: number }) => entry.kind === 'capture' && entry.purchasedDeltaCents + entry.subscriptionDeltaCents !== 0).length;
}

/**
 * What a SIGKILL between the gate's settle and the store's `complete` leaves of a call with `key`: the charge
 * stored under the call's id, and its claim still running, here already past its lapse (the call presumed dead).
 */
async function diedBeforeKeeping(account: Provisioned, key: string): Promise<void> {
  const store = env.IDEMPOTENCY_STORE.get(env.IDEMPOTENCY_STORE.idFromName(account.workspaceId));
  await runInDurableObject(store, (_instance, state) => {
    state.storage.sql.exec("UPDATE idempotency_keys SET state = 'running', answer = NULL, answer_bytes = 0, running_until = 0 WHERE key = ?", key);
  });
}

/** Has the workspace's gate send the wallet everything it holds, so the wallet's figures are whole. */
async function reportAll(account: Provisioned): Promise<void> {
  await runInDurableObject(gateOf(env, account.workspaceId), (instance) => (instance as unknown as { flush(): Promise<void> }).flush());
}

/** The captures in the wallet's ledger as it stands, without the statement's asking the gates to report first. */
function capturesIn(organizationId: string): Promise<number> {
  return runInDurableObject(env.ORG_WALLET.get(env.ORG_WALLET.idFromName(organizationId)), (_, state) =>
    state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM ledger WHERE kind = 'capture'").one().n,
  );
}

/** A wallet method as the gate or the service finds it while the wallet cannot be reached. */
function walletUnreachable(): never {
  throw new Error('the wallet is unreachable');
}

function uniqueKey(): string {
  return crypto.randomUUID();
}

describe('Idempotency-Key on metered calls', () => {
  it('runs 10 simultaneous retries with one key once: one upstream call, one charge, nine 409 CONFLICT with retryAfter; a later retry replays the answer uncharged', async () => {
    const account = await funded(100, 'payg');
    const upstream = watchUpstream({ held: true });
    const key = uniqueKey();

    const answered: Response[] = [];
    const all = Promise.all(Array.from({ length: 10 }, () => lookup(account, 'once.example.com', key).then((response) => (answered.push(response), response))));
    // The first call is held at the vendor until every retry has been answered.
    await eventually(async () => answered.length, (count) => count === 9);
    upstream.release();
    const responses = await all;

    const fresh = responses.filter((response) => response.status === 200);
    const conflicts = responses.filter((response) => response.status === 409);
    expect(fresh).toHaveLength(1);
    expect(conflicts).toHaveLength(9);
    for (const conflict of conflicts) {
      const { error } = await json(conflict);
      expect(error).toMatchObject({ code: 'CONFLICT', retryAfter: 1 });
      expect(error.message).toContain('still running');
      expect(conflict.headers.get('retry-after')).toBe('1');
    }
    const first = await json(fresh[0]!);
    expect(fresh[0]!.headers.get('idempotent-replayed')).toBeNull();
    expect(first.meta.replayed).toBeUndefined();
    expect(upstream.calls).toBe(1);
    expect(await charges(account.organizationId)).toBe(1);
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBe(99);

    const retry = await lookup(account, 'once.example.com', key);
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    const replayed = await json(retry);
    expect(replayed.data).toEqual(first.data);
    expect(replayed.meta).toEqual({ ...first.meta, replayed: true });
    expect(upstream.calls).toBe(1);
    expect(await charges(account.organizationId)).toBe(1);
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBe(99);

    // Usage: the one charged call, the nine refusals and the replay (cost 0, no upstream call).
    const rows = await eventually(
      () => call('/v1/usage?limit=50', { headers: { authorization: `Bearer ${account.key}` } }).then(json),
      (body) => body.data.rows.length === 11,
    );
    const summary = rows.data.rows.map((row: { status: number; costCents: number }) => `${row.status}:${row.costCents}`).sort();
    expect(summary).toEqual(['200:0', '200:1', ...Array(9).fill('409:0')]);
  });

  it("replays `message` as a string for an operation that shows one, also from an answer kept without it", async () => {
    const account = await funded(100);
    const key = `msg-${crypto.randomUUID()}`;
    expect((await json(await lookup(account, 'nomessage.com', key))).message).toBe('');
    // As an answer kept before the rule was: the vendor's success had no message, and neither had the answer.
    const store = env.IDEMPOTENCY_STORE.get(env.IDEMPOTENCY_STORE.idFromName(account.workspaceId));
    const stripped = await runInDurableObject(store, (_instance, state) =>
      state.storage.sql.exec("UPDATE idempotency_keys SET answer = json_remove(answer, '$.message') WHERE key = ? AND state = 'answered'", key).rowsWritten,
    );
    expect(stripped).toBe(1);
    const replay = await lookup(account, 'nomessage.com', key);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await json(replay)).toMatchObject({ success: true, message: '', data: { website: 'https://nomessage.com' } });
  });

  it('refuses the same key with another input or another operation with 409 CONFLICT, uncharged; another workspace has keys of its own', async () => {
    const account = await funded(100, 'payg');
    const key = uniqueKey();
    expect((await lookup(account, 'first.example.com', key)).status).toBe(200);

    const otherInput = await lookup(account, 'second.example.com', key);
    expect(otherInput.status).toBe(409);
    const { error } = await json(otherInput);
    expect(error.code).toBe('CONFLICT');
    expect(error.message).toContain('another operation or input');
    expect(error.retryAfter).toBeUndefined();

    const otherOperation = await call('/scrape', {
      method: 'POST',
      headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ url: 'https://first.example.com' }),
    });
    expect(otherOperation.status).toBe(409);
    expect((await json(otherOperation)).error.code).toBe('CONFLICT');
    expect(await charges(account.organizationId)).toBe(1);

    const sibling = await ops('POST', '/workspaces', { organizationId: account.organizationId, name: 'sibling' });
    const siblingKey = await ops('POST', '/keys', { workspaceId: sibling.body.data.id });
    const elsewhere = await lookup({ ...account, key: siblingKey.body.data.key }, 'second.example.com', key);
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.headers.get('idempotent-replayed')).toBeNull();
    expect(await charges(account.organizationId)).toBe(2);
  });

  it('takes the input, not its spelling: the same body with its fields in another order replays', async () => {
    const account = await funded(100, 'payg');
    const key = uniqueKey();
    const scrape = (fields: Record<string, unknown>) =>
      call('/scrape', {
        method: 'POST',
        headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify(fields),
      });
    // A page of its own: the vendor fake remembers what it was asked, and other files read that.
    const url = `https://news.example.com/idempotency/${key}`;
    const original = await scrape({ url, formats: ['markdown', 'links'] });
    expect(original.status).toBe(200);
    const reordered = await scrape({ formats: ['markdown', 'links'], url });
    expect(reordered.status).toBe(200);
    expect(reordered.headers.get('idempotent-replayed')).toBe('true');
    expect((await json(reordered)).data).toEqual((await json(original)).data);
    expect(await charges(account.organizationId)).toBe(1);
  });

  it('runs the call again, and charges it, once 24 hours have passed (by the clock)', async () => {
    const start = Date.UTC(2030, 0, 1, 12, 0, 0);
    const now = vi.spyOn(clock, 'now').mockReturnValue(start);
    const account = await funded(100, 'payg');
    const upstream = watchUpstream();
    const key = uniqueKey();
    expect((await lookup(account, 'daily.example.com', key)).status).toBe(200);

    now.mockReturnValue(start + DAY_MS - 1);
    const withinADay = await lookup(account, 'daily.example.com', key);
    expect(withinADay.headers.get('idempotent-replayed')).toBe('true');
    expect(upstream.calls).toBe(1);

    now.mockReturnValue(start + DAY_MS);
    const nextDay = await lookup(account, 'daily.example.com', key);
    expect(nextDay.status).toBe(200);
    expect(nextDay.headers.get('idempotent-replayed')).toBeNull();
    expect((await json(nextDay)).meta.costCents).toBe(1);
    expect(upstream.calls).toBe(2);
    // Charged twice, read from the balance: a day on, the first day's captures may already be folded into
    // the ledger's day summary (durable-objects/ledger-summaries.ts), so they are not counted as entries.
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBe(98);
  });

  it('charges once when the process died after the charge and before the answer was kept: the retry past the lapse runs again as the same call', async () => {
    const account = await funded(100, 'payg');
    const key = uniqueKey();
    expect((await lookup(account, 'killed.example.com', key)).status).toBe(200);
    await eventually(() => charges(account.organizationId), (count) => count === 1);
    await diedBeforeKeeping(account, key);

    const retry = await lookup(account, 'killed.example.com', key);
    expect(retry.status).toBe(200);
    // Run again (from the response cache, which kept the first answer) and charged, as the same call: once.
    expect((await json(retry)).data).toMatchObject({ name: company.data.name });
    // A later call of the same gate: its capture lands after the retry's (one message at a time, in order).
    expect((await lookup(account, 'after.example.com')).status).toBe(200);
    await eventually(() => charges(account.organizationId), (count) => count >= 2);
    expect(await charges(account.organizationId)).toBe(2);
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBe(98);
    const usage = await eventually(
      async () => (await json(await call('/v1/usage?limit=50', { headers: { authorization: `Bearer ${account.key}` } }))).data.rows as { costCents: number }[],
      (rows) => rows.filter((row) => row.costCents > 0).length >= 2,
    );
    expect(usage.filter((row) => row.costCents > 0)).toHaveLength(2);
  });

  it('does not charge again the retry that takes over a charged call after the wallet folded its capture: the answer is lost, and the key says so', async () => {
    const account = await funded(100, 'payg');
    const key = uniqueKey();
    expect((await lookup(account, 'folded.example.com', key)).status).toBe(200);
    await eventually(() => charges(account.organizationId), (count) => count === 1);
    // The charged row in D1, where the wallet's flush puts it.
    await eventually(
      async () => (await json(await call('/v1/usage?limit=5', { headers: { authorization: `Bearer ${account.key}` } }))).data.rows as { costCents: number }[],
      (rows) => rows.some((row) => row.costCents > 0),
    );
    await diedBeforeKeeping(account, key);
    // Retried two hours later: by then the wallet has folded the capture into its day row (its alarm at that
    // time), and keeps no id to match.
    vi.spyOn(clock, 'now').mockReturnValue(Date.now() + 2 * 60 * 60 * 1000);
    const walletObject = env.ORG_WALLET.get(env.ORG_WALLET.idFromName(account.organizationId));
    await runInDurableObject(walletObject, (instance) => (instance as unknown as { alarm(): Promise<void> }).alarm());
    expect(await runInDurableObject(walletObject, (_, state) => state.storage.sql.exec("SELECT COUNT(*) AS n FROM ledger WHERE kind = 'capture'").one().n)).toBe(0);

    for (const attempt of [1, 2]) {
      const retry = await lookup(account, 'folded.example.com', key);
      expect(retry.status, `attempt ${attempt}`).toBe(409);
      const { error } = await json(retry);
      expect(error.code).toBe('CONFLICT');
      expect(error.message).toContain('was lost');
      expect(error.retryAfter).toBeUndefined();
    }
    // Charged once: a new key runs the call again, and is charged for it.
    expect((await lookup(account, 'folded.example.com', uniqueKey())).status).toBe(200);
    await eventually(async () => (await wallet(account.organizationId)).purchasedBalanceCents, (cents) => cents === 98);
  });

  it("does not charge again a late retry whose first call's usage row reaches D1, and its capture is folded, while the retry runs", async () => {
    const account = await funded(100, 'payg');
    const key = uniqueKey();
    // D1 is behind: the wallet keeps the first call's usage row in its outbox, and its capture in detail.
    const behind = vi.spyOn(UsageOutbox.prototype, 'flush').mockRejectedValue(new Error('D1 is behind'));
    expect((await lookup(account, 'behind.example.com', key)).status).toBe(200);
    await eventually(() => charges(account.organizationId), (count) => count === 1);
    // Its process died before the answer was kept; the retry comes two hours later.
    await diedBeforeKeeping(account, key);
    vi.spyOn(clock, 'now').mockReturnValue(Date.now() + 2 * 60 * 60 * 1000);

    const upstream = watchUpstream({ held: true });
    const retrying = lookup(account, 'behind.example.com', key);
    const answered = await Promise.race([retrying.then(() => 'answered'), eventually(async () => upstream.calls, (calls) => calls > 0).then(() => 'asked')]);
    // Meanwhile D1 catches up: the row lands and the wallet folds the capture into its day's row.
    behind.mockRestore();
    const walletObject = env.ORG_WALLET.get(env.ORG_WALLET.idFromName(account.organizationId));
    await runInDurableObject(walletObject, (instance) => (instance as unknown as { alarm(): Promise<void> }).alarm());
    upstream.release();
    const retry = await retrying;
    // The wallet still had the capture when the retry asked: the answer is lost, and the call was not run again.
    expect(answered).toBe('answered');
    expect(retry.status).toBe(409);
    expect((await json(retry)).error.message).toContain('was lost');
    await reportAll(account);
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBe(99);
  });

  it('tells the retry of a call lost past its time limit to come back when its claim lapses, and then runs it', async () => {
    const account = await funded(100, 'payg');
    const key = uniqueKey();
    const start = Date.now();
    const now = vi.spyOn(clock, 'now').mockReturnValue(start);
    expect((await lookup(account, 'lost.example.com', key)).status).toBe(200);
    // What a SIGKILL during the call leaves, seen 10 s past the end of its time limit and settling: its claim
    // still running, unanswered, lapsing in 50 s (the hold's grace less those 10 s and the 5 s to settle).
    const store = env.IDEMPOTENCY_STORE.get(env.IDEMPOTENCY_STORE.idFromName(account.workspaceId));
    await runInDurableObject(store, (_instance, state) => {
      state.storage.sql.exec("UPDATE idempotency_keys SET state = 'running', answer = NULL, answer_bytes = 0, running_until = ? WHERE key = ?", start + HOLD_GRACE_MS - 15_000, key);
    });

    const refused = await lookup(account, 'lost.example.com', key);
    expect(refused.status).toBe(409);
    const { error } = await json(refused);
    expect(error).toMatchObject({ code: 'CONFLICT', retryAfter: 45 });
    expect(error.message).toContain('was lost');
    expect(refused.headers.get('retry-after')).toBe('45');

    // Still within its time limit and settling, a first call is waited for a second at a time.
    await runInDurableObject(store, (_instance, state) => {
      state.storage.sql.exec('UPDATE idempotency_keys SET running_until = ? WHERE key = ?', start + HOLD_GRACE_MS - 4_000, key);
    });
    const waited = await json(await lookup(account, 'lost.example.com', key));
    expect(waited.error).toMatchObject({ code: 'CONFLICT', retryAfter: 1 });
    expect(waited.error.message).toContain('still running');

    now.mockReturnValue(start + HOLD_GRACE_MS);
    const rerun = await lookup(account, 'lost.example.com', key);
    expect(rerun.status).toBe(200);
    expect(rerun.headers.get('idempotent-replayed')).toBeNull();
  });

  it('keeps nothing of a failed call: its retry with the same key runs afresh and is charged once', async () => {
    const account = await funded(100, 'payg');
    const key = uniqueKey();
    // The fake vendor fails the first call for a `flaky.` domain and answers the next ones.
    const domain = `flaky.${key}.example.com`;
    const failed = await lookup(account, domain, key);
    expect(failed.status).toBe(502);
    const retried = await lookup(account, domain, key);
    expect(retried.status).toBe(200);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    const again = await lookup(account, domain, key);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await charges(account.organizationId)).toBe(1);
  });

  it.each([
    ['has reached the wallet', false],
    ['still waits in the gate (the wallet unreachable)', true],
  ])('keeps a charged dead call\'s id with its key when the retry that took it over fails: the next retry runs as that call, charged once (its charge %s)', async (_case, walletDown) => {
    // The three calls below in one window (on the real clock, a run that straddled two served the third call,
    // meant for the window's 429).
    startAMinute();
    const account = await funded(100, 'payg');
    // Two calls a minute: the retry that takes the dead call over is refused by the window (the response cache
    // would answer it in place of a failing upstream).
    await ops('PUT', `/organizations/${account.organizationId}/plan`, { plan: 'payg', rpm: 2 });
    // A first call draws the gate's lease and is reported, so the rest need nothing from the wallet. (Read in
    // the ledger itself: the wallet's statement would have the gate give its lease back.)
    expect((await lookup(account, 'warm.example.com')).status).toBe(200);
    await eventually(() => capturesIn(account.organizationId), (count) => count === 1);
    const unreachable = walletDown ? vi.spyOn(OrgWallet.prototype, 'sync').mockImplementation(walletUnreachable) : undefined;
    const key = uniqueKey();
    expect((await lookup(account, 'charged-then-died.example.com', key)).status).toBe(200);
    expect(await eventually(() => capturesIn(account.organizationId), (count) => count === 2, walletDown ? 20 : 300)).toBe(walletDown ? 1 : 2);
    await diedBeforeKeeping(account, key);

    expect((await lookup(account, 'charged-then-died.example.com', key)).status).toBe(429);
    vi.spyOn(clock, 'now').mockReturnValue(clock.now() + 61_000);
    const retry = await lookup(account, 'charged-then-died.example.com', key);
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();

    unreachable?.mockRestore();
    // Past the gate's wait before it sends its refused message again (at most PARKED_RETRY_MS): the gate's alarm
    // may try the unreachable wallet once more after the retry above, and on the clock held still the message then
    // waits past every report here (a CI run of 2026-12-02; running the alarm just before this line fails it).
    vi.spyOn(clock, 'now').mockReturnValue(clock.now() + PARKED_RETRY_MS);
    await reportAll(account);
    expect(await charges(account.organizationId)).toBe(2);
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBe(98);
  });

  it("answers a call whose settle's answer was lost twice once its charge is found, and replays that answer to its retry, charged once", async () => {
    const account = await funded(100, 'payg');
    const key = uniqueKey();
    const settles = losingSettleAnswers(2);
    expect((await lookup(account, 'answer-lost.example.com', key)).status).toBe(200);
    expect(settles.lost).toBe(2);
    settles.restore();

    const retry = await lookup(account, 'answer-lost.example.com', key);
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    await reportAll(account);
    expect(await charges(account.organizationId)).toBe(1);
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBe(99);
  });

  it("keeps the id of a call whose settle's answer was lost twice and whose charge could not be read, a 500 though the gate charged it: the retry runs as that call, not charged again", async () => {
    const account = await funded(100, 'payg');
    const key = uniqueKey();
    const settles = losingSettleAnswers(2);
    // The call's own read of where its charge went fails; the key's, when it is given back, does not.
    const read = vi.spyOn(WorkspaceGate.prototype, 'waitingChargeOf').mockImplementationOnce(() => {
      throw new Error('Network connection lost.');
    });
    expect((await lookup(account, 'answer-lost-unread.example.com', key)).status).toBe(500);
    expect(settles.lost).toBe(2);
    expect(read).toHaveBeenCalledTimes(2);
    settles.restore();

    const retry = await lookup(account, 'answer-lost-unread.example.com', key);
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    await reportAll(account);
    expect(await charges(account.organizationId)).toBe(1);
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBe(99);
  });

  it('gives the key of a call that failed before its settle back at once, the wallet unreachable: its retry runs as soon as the wallet is back', async () => {
    const account = await funded(100, 'payg');
    const key = uniqueKey();
    // The gate's first call draws its lease from the wallet: unreachable, the call fails (500) before any charge.
    const draws = vi.spyOn(OrgWallet.prototype, 'sync').mockImplementation(walletUnreachable);
    const reads = vi.spyOn(OrgWallet.prototype, 'captureOf').mockImplementation(walletUnreachable);
    expect((await lookup(account, 'wallet-down.example.com', key)).status).toBe(500);
    draws.mockRestore();
    reads.mockRestore();
    // Past the gate's wait before it sends its failed message again.
    vi.spyOn(clock, 'now').mockReturnValue(Date.now() + 2 * FIRST_RETRY_MS);
    const retry = await lookup(account, 'wallet-down.example.com', key);
    expect(retry.status).toBe(200);
  });

  it("gives an uncharged dead call's id back when the retry that took it over fails: the next retry is a new call, charged once and recorded", async () => {
    const account = await funded(100, 'payg');
    const key = uniqueKey();
    // The first call failed, and its process stopped before it gave the key back: its id holds only a failure.
    vi.spyOn(IdempotencyStore.prototype, 'release').mockImplementationOnce(() => {});
    const down = watchUpstream({ answer: () => new Response('upstream down', { status: 503 }) });
    expect((await lookup(account, 'failed-then-died.example.com', key)).status).toBe(502);
    await diedBeforeKeeping(account, key);
    // Its retry takes it over and fails too (the takeover's failure row holds the id as well).
    expect((await lookup(account, 'failed-then-died.example.com', key)).status).toBe(502);
    expect(down.calls).toBe(2);
    vi.mocked(globalThis.fetch).mockRestore();

    const retry = await lookup(account, 'failed-then-died.example.com', key);
    expect(retry.status).toBe(200);
    await reportAll(account);
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBe(99);
    const rows = await eventually(
      async () => (await json(await call('/v1/usage?limit=10', { headers: { authorization: `Bearer ${account.key}` } }))).data.rows as { status: number; costCents: number }[],
      (landed) => landed.length >= 2,
    );
    // One failure row: the dead call's and its takeover's share an id.
    expect(rows.map((row) => [row.status, row.costCents]).sort()).toEqual([[200, 1], [502, 0]]);
  });

  it.each([
    ['empty', ''],
    ['256 characters long', 'k'.repeat(256)],
    ['holding a tab', 'one\ttwo'],
  ])('refuses a key %s with 400 VALIDATION_ERROR naming the header, uncharged', async (_case, value) => {
    const account = await funded(100, 'payg');
    const upstream = watchUpstream();
    const response = await lookup(account, 'valid.example.com', value);
    expect(response.status).toBe(400);
    const { error } = await json(response);
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.details).toEqual([{ field: 'Idempotency-Key', location: 'query', message: 'Must be 1 to 255 printable ASCII characters.' }]);
    expect(upstream.calls).toBe(0);
    expect(await charges(account.organizationId)).toBe(0);
  });

  it('names a bad key and a bad input in one 400', async () => {
    const account = await funded(100, 'payg');
    const response = await call('/v1/data/linkedin/get-company-by-domain?domain=', { headers: { authorization: `Bearer ${account.key}`, 'idempotency-key': 'k'.repeat(300) } });
    expect(response.status).toBe(400);
    const fields = (await json(response)).error.details.map((detail: { field: string }) => detail.field);
    expect(fields.sort()).toEqual(['Idempotency-Key', 'domain']);
  });

  it('accepts 255 printable characters, spaces and quotes included', async () => {
    const account = await funded(100, 'payg');
    const key = `"${'a b'.repeat(84)}"`;
    expect(key).toHaveLength(254);
    expect((await lookup(account, 'long-key.example.com', `${key}!`)).status).toBe(200);
    expect((await lookup(account, 'long-key.example.com', `${key}!`)).headers.get('idempotent-replayed')).toBe('true');
  });

  it('refuses a revoked key with 401 rather than replaying to it', async () => {
    const account = await funded(100, 'payg');
    const key = uniqueKey();
    expect((await lookup(account, 'revoked.example.com', key)).status).toBe(200);
    await ops('POST', `/keys/${account.keyId}/revoke`);
    const retry = await lookup(account, 'revoked.example.com', key);
    expect(retry.status).toBe(401);
  });

  it('charges a success whose answer is too large to keep, and answers its retry 409 CONFLICT saying so, uncharged', async () => {
    const account = await funded(100, 'payg');
    const huge = { ...company, data: { ...company.data, description: 'x'.repeat(1_100_000) } };
    const upstream = watchUpstream({ answer: () => Response.json(huge) });
    const key = uniqueKey();
    const first = await lookup(account, 'huge.example.com', key);
    expect(first.status).toBe(200);
    expect((await json(first)).data.description).toHaveLength(1_100_000);

    const retry = await lookup(account, 'huge.example.com', key);
    expect(retry.status).toBe(409);
    const { error } = await json(retry);
    expect(error.code).toBe('CONFLICT');
    expect(error.message).toContain('too large to keep');
    expect(upstream.calls).toBe(1);
    expect(await charges(account.organizationId)).toBe(1);
  });

  it('replays without charging even once the balance is spent', async () => {
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 1 });
    const key = uniqueKey();
    expect((await lookup(account, 'last-cent.example.com', key)).status).toBe(200);
    expect((await lookup(account, 'other.example.com')).status).toBe(402);
    const retry = await lookup(account, 'last-cent.example.com', key);
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect((await wallet(account.organizationId)).purchasedBalanceCents).toBe(0);
  });
});

describe('an idempotency store kept from before call ids and charges were kept', () => {
  it('gains the columns when it starts, answers its old rows (a charge of 0 where none was kept) and takes new claims', async () => {
    const store = env.IDEMPOTENCY_STORE.get(env.IDEMPOTENCY_STORE.idFromName(`ws_old_${crypto.randomUUID()}`));
    await runInDurableObject(store, (_instance, state) => {
      const sql = state.storage.sql;
      sql.exec('DROP TABLE idempotency_keys');
      sql.exec(`CREATE TABLE idempotency_keys (key TEXT PRIMARY KEY, digest TEXT NOT NULL, state TEXT NOT NULL, running_until INTEGER NOT NULL, expires_at INTEGER NOT NULL, answer TEXT, answer_bytes INTEGER NOT NULL DEFAULT 0)`);
      sql.exec("INSERT INTO idempotency_keys VALUES ('old', 'digest', 'unkept', 0, ?, NULL, 2000000)", Date.now() + DAY_MS);
      const restarted = new IdempotencyStore(state, env as never);
      expect(restarted.claim('old', 'digest', 1_000, 'use_new')).toEqual({ kind: 'unkept', answerBytes: 2_000_000, costUnits: 0 });
      expect(restarted.claim('fresh', 'digest', 1_000, 'use_fresh')).toEqual({ kind: 'claimed', callId: 'use_fresh' });
      expect(restarted.complete('fresh', 'digest', null, 1, 10_000)).toBe(false);
      expect(restarted.claim('fresh', 'digest', 1_000, 'use_again')).toEqual({ kind: 'unkept', answerBytes: 1, costUnits: 10_000 });
    });
  });
});

describe("an idempotency store's kept answers", () => {
  /** Keys `from` to `to` (excluded) claimed and answered, each answer counted as `bytes`. */
  const answer = (store: IdempotencyStore, from: number, to: number, bytes: number) => {
    for (let n = from; n < to; n++) {
      store.claim(`key-${n}`, 'digest', 1_000, `use_${n}`);
      expect(store.complete(`key-${n}`, 'digest', '{}', bytes, 1)).toBe(true);
    }
  };

  it('are summed from one row when the store starts again, not from every key of the day, and still bound what it keeps', async () => {
    const store = env.IDEMPOTENCY_STORE.get(env.IDEMPOTENCY_STORE.idFromName(`ws_kept_${crypto.randomUUID()}`));
    await runInDurableObject(store, (instance, state) => {
      answer(instance as IdempotencyStore, 0, 3_000, 1_000);
      let restarted: IdempotencyStore | undefined;
      // Its tables' definitions and one row: summed from the keys, the start read all 3,000.
      expect(objectRowsReadWhile(state.storage.sql, () => (restarted = new IdempotencyStore(state, env as never)))).toBeLessThan(50);
      if (!restarted) throw new Error('not started');
      const room = KEPT_BYTES_PER_WORKSPACE - 3_000 * 1_000;
      restarted.claim('over', 'digest', 1_000, 'use_over');
      expect(restarted.complete('over', 'digest', '{}', room + 1, 1)).toBe(false);
      restarted.claim('fits', 'digest', 1_000, 'use_fits');
      expect(restarted.complete('fits', 'digest', '{}', room, 1)).toBe(true);
    });
  });

  it('leave the sum when they expire, purged or claimed again past the purge\'s batch, so none stays counted for good', async () => {
    const store = env.IDEMPOTENCY_STORE.get(env.IDEMPOTENCY_STORE.idFromName(`ws_expired_${crypto.randomUUID()}`));
    const start = Date.now();
    await runInDurableObject(store, (instance, state) => {
      const now = vi.spyOn(clock, 'now').mockReturnValue(start);
      // 600 answers, more than a purge takes at once, each 100,000 bytes: 60 MB of the 100 MB kept at most.
      answer(instance as IdempotencyStore, 0, 600, 100_000);
      now.mockReturnValue(start + IDEMPOTENCY_WINDOW_MS + 1);
      // Claimed again once expired: the purge before it took 500 others, the claim replaces this one.
      const store = new IdempotencyStore(state, env as never);
      expect(store.claim('key-599', 'other digest', 1_000, 'use_again')).toEqual({ kind: 'claimed', callId: 'use_again' });
      // The other 99 go with the next purge; then the whole bound is free again, also for a store started afresh.
      store.claim('next', 'digest', 1_000, 'use_next');
      const restarted = new IdempotencyStore(state, env as never);
      restarted.claim('whole', 'digest', 1_000, 'use_whole');
      expect(restarted.complete('whole', 'digest', '{}', KEPT_BYTES_PER_WORKSPACE, 1)).toBe(true);
    });
  });
});

describe("an idempotency key's call taken over", () => {
  it('stays as old as its first claim through takeovers that die too: each later takeover is late once that claim is', async () => {
    const store = env.IDEMPOTENCY_STORE.get(env.IDEMPOTENCY_STORE.idFromName(`ws_takeovers_${crypto.randomUUID()}`));
    const start = Date.now();
    await runInDurableObject(store, (instance) => {
      const at = (ms: number) => vi.spyOn(clock, 'now').mockReturnValue(start + ms);
      const claim = () => (instance as IdempotencyStore).claim('key', 'digest', 1_000, `use_${clock.now()}`);
      at(0);
      expect(claim()).toEqual({ kind: 'claimed', callId: `use_${start}` });
      // Lapsed within the half hour: the same call, not late.
      at(10 * 60 * 1000);
      expect(claim()).toEqual({ kind: 'claimed', callId: `use_${start}` });
      // That takeover died too; 25 minutes after it, and 35 after the first claim: late.
      at(35 * 60 * 1000);
      expect(claim()).toEqual({ kind: 'claimed', callId: `use_${start}`, lateTakeover: true });
    });
  });
});
