import { introspectWorkflow, runDurableObjectAlarm, runInDurableObject, type WorkflowInstanceModifier } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { clock } from '../../src/core/clock';
import { decryptKey } from '../../src/core/keys';
import { call, eventually, json, provision } from '../support/api';
import { intoOneMonth } from '../support/held-minute';
import { release } from '../../src/services/jobs/instances';
import { LOOK_AGAIN_EVENT } from '../../src/services/jobs/wake';
import { findJob, insertJob, type JobRecord, type JobView, viewOf } from '../../src/services/jobs/store';

export const JOBS = '/v1/data/agnt/jobs';

export async function submit(key: string, body: unknown): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await call(JOBS, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: response.status, body: await json(response), headers: response.headers };
}

export function jobRequest(key: string, path: string, init: RequestInit = {}): Promise<Response> {
  return call(`${JOBS}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, ...(init.headers ?? {}) } });
}

export async function readJob(key: string, id: string): Promise<any> {
  return (await json(await jobRequest(key, `/${id}`))).data;
}

/**
 * Time for jobs under test: the Workflow's sleeps end at once (the platform's test hook), and the
 * injectable clock, which the rate window, retry backoff and credit re-checks read, is moved on by the
 * test whenever the job makes no progress. A job that waits for the window or a backoff then goes on
 * within milliseconds, while every rule it follows is still decided by that clock. A wait for money is
 * not a sleep but a wait for the look-again event with its recheck as the timeout, which the hook does
 * not shorten: `driveJob` sends the event when it moves the clock to the recheck. `sleeps: 'real'` keeps
 * every wait as long as it is, for what must end a wait by itself; `modify` changes each new instance further
 * (the platform's test hooks).
 */
export async function jobTime(options: { sleeps?: 'real'; modify?: (modifier: WorkflowInstanceModifier) => Promise<void> } = {}) {
  const introspector = await introspectWorkflow(env.DATA_JOBS);
  await introspector.modifyAll(async (modifier) => {
    if (options.sleeps !== 'real') await modifier.disableSleeps();
    await options.modify?.(modifier);
  });
  // A test's waits for money move the clock on by up to a few hours (15 minutes a recheck), and a key's limit is a month's.
  let offset = intoOneMonth(Date.now(), JOB_TEST_SPAN_MS);
  const realNow = clock.now;
  clock.now = () => Date.now() + offset;
  return {
    advance(ms: number) {
      offset += ms;
    },
    async dispose() {
      clock.now = realNow;
      await introspector.dispose();
    },
  };
}

/** The most a jobs test moves its clock on: the longest measured 2.3 hours (jobs.test.ts, a key's limit waited out). */
const JOB_TEST_SPAN_MS = 6 * 60 * 60_000;

export type JobTime = Awaited<ReturnType<typeof jobTime>>;

/**
 * Polls the job until `done`; when `follow` (the default), a job that waits (the window, a retry's backoff,
 * money) has the clock moved on to the moment it said it looks again, so it goes on at once. At most
 * `seconds` of real time.
 */
export async function driveJob(id: string, time: JobTime, done: (job: JobView) => boolean, options: { follow?: boolean; seconds?: number } = {}): Promise<JobView> {
  const until = Date.now() + (options.seconds ?? 60) * 1000;
  // Read from D1, not GET /v1/data/agnt/jobs/:id: polling that route would spend the window the job paces itself to.
  const read = async () => (await findJob(env.DB, id))!;
  let job = await read();
  while (!done(viewOf(job)) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    job = await read();
    const now = clock.now();
    if (options.follow !== false && job.resumeAt > now) {
      time.advance(job.resumeAt - now + 1);
      if (job.status === 'waiting_for_credits') await lookAgain(id);
    }
  }
  return viewOf(job);
}

/** What the platform does when a wait for money reaches its recheck (the clock moved there): the job looks again. */
export async function lookAgain(id: string): Promise<void> {
  const instance = await env.DATA_JOBS.get(id);
  try {
    await instance.sendEvent({ type: LOOK_AGAIN_EVENT, payload: null });
  } finally {
    release(instance);
  }
}

/** The job's key id, read from its row (the key itself is never answered). */
export async function jobKeyId(id: string): Promise<string> {
  return (await env.DB.prepare('SELECT key_id AS keyId FROM data_jobs WHERE id = ?').bind(id).first<{ keyId: string }>())!.keyId;
}

/** The job's key itself, decrypted from its row as only the server can: for the test of what it may do. */
export async function jobKey(id: string): Promise<string> {
  const keyId = await jobKeyId(id);
  const row = await env.DB.prepare('SELECT key_ciphertext AS ciphertext FROM api_keys WHERE id = ?').bind(keyId).first<{ ciphertext: string }>();
  return decryptKey(row!.ciphertext, keyId, env.KEY_ENCRYPTION_KEY);
}

export async function usageOfKey(keyId: string): Promise<{ status: number; cost_units: number; error_code: string | null }[]> {
  return (await env.DB.prepare('SELECT status, cost_units, error_code FROM usage WHERE key_id = ?').bind(keyId).all<{ status: number; cost_units: number; error_code: string | null }>()).results;
}

/**
 * The usage rows of a job's key once every row of its workspace has landed in D1: the gate reports what it
 * holds, the wallet's alarm writes its outbox, and the outbox is read until empty (a row leaves it only once
 * D1 has it). Without the last wait, an alarm of the wallet already running in real time when the test asked
 * for one could still be writing, and the rows came in after they were counted (a CI run of 2026-11-28).
 */
export async function landedUsageOfJob(account: { organizationId: string; workspaceId: string }, jobId: string): Promise<Awaited<ReturnType<typeof usageOfKey>>> {
  await env.WORKSPACE_GATE.get(env.WORKSPACE_GATE.idFromName(account.workspaceId)).flush();
  const wallet = env.ORG_WALLET.get(env.ORG_WALLET.idFromName(account.organizationId));
  await runDurableObjectAlarm(wallet);
  await eventually(
    () => runInDurableObject(wallet, (_, state) => state.storage.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM usage_lots').one().n),
    (waiting) => waiting === 0,
  );
  return usageOfKey(await jobKeyId(jobId));
}

export async function ndjsonResults(key: string, id: string): Promise<any[]> {
  const response = await jobRequest(key, `/${id}/results`, { headers: { accept: 'application/x-ndjson' } });
  const text = await response.text();
  return text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line));
}

/** A job row of its own with `items` pending items, written straight to D1: what a slice's writes land on. */
export async function storedJob(items: number, options: { operation?: string; inputs?: unknown[]; account?: { organizationId: string; workspaceId: string } } = {}): Promise<JobRecord> {
  const account = options.account ?? (await provision());
  const job: JobRecord = {
    id: `job_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`,
    organizationId: account.organizationId,
    workspaceId: account.workspaceId,
    operation: options.operation ?? 'web/scrape',
    name: null,
    status: 'running',
    reason: null,
    items,
    succeeded: 0,
    failed: 0,
    spentUnits: 0,
    quotedUnits: 0,
    maxCostUnits: null,
    keyId: null,
    budgetKeyId: null,
    grantId: null,
    connectionId: null,
    intoDatabaseId: null,
    intoTable: null,
    windowResetAt: 0,
    windowLimit: 0,
    windowRemaining: 0,
    resumeAt: 0,
    createdAt: new Date().toISOString(),
    startedAt: null,
    finishedAt: null,
    resultsPrunedAt: null,
    waitingSince: null,
    waitingOn: null,
  };
  await insertJob(env.DB, job, options.inputs ?? Array.from({ length: items }, (_, index) => ({ url: `https://example.com/${index}` })));
  return job;
}

