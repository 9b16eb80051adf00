import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clock } from '../../src/core/clock';
import { forgetCountedHours } from '../../src/services/runtime-hours';
import { PLAN_TABLE } from '../../src/core/plans';
import { bearer, call, credit, eventually, json, ops, wallet } from '../support/api';
import { type Person, signUp } from '../support/dashboard';

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
  vi.restoreAllMocks();
});

const HOUR = 60 * 60 * 1000;
const KEY = /^sluice_live_[0-9a-f]{32}$/;

function deploy(person: Person, name: string, extra: Record<string, unknown> = {}) {
  return person.json('POST', `/api/workspaces/${person.workspaceId}/agents`, { name, ...extra });
}

function runtime(key: string, path: string) {
  return call(path, bearer(key));
}

function company(key: string, domain: string) {
  return runtime(key, `/runtime/data/linkedin/get-company-by-domain?domain=${encodeURIComponent(domain)}`);
}

async function refusal(response: Response) {
  const body = await json(response);
  return { status: response.status, code: body.error?.code as string | undefined, message: body.error?.message as string | undefined };
}

/** Someone whose organization is on a plan (set by the operator) with credit to spend. */
async function onPlan(plan: keyof typeof PLAN_TABLE, caps: Record<string, number> = {}, cents = 100) {
  const person = await signUp();
  const set = await ops('PUT', `/organizations/${person.organizationId}/plan`, { plan, caps });
  expect(set.status).toBe(200);
  await credit(person.organizationId, { purchasedCents: cents });
  return person;
}

describe('deploying an agent', () => {
  it('needs a plan: 400 for a bad body first, then 402 DEPLOY_GATE_FAILED; after the free trial it deploys and answers the key once', async () => {
    const owner = await signUp();
    const invalid = await deploy(owner, '   ');
    expect([invalid.status, invalid.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect(invalid.body.error.details).toEqual([expect.objectContaining({ field: 'name', location: 'body' })]);

    const gated = await deploy(owner, 'researcher');
    expect([gated.status, gated.body.error.code]).toEqual([402, 'DEPLOY_GATE_FAILED']);
    expect(gated.body.error.message).toMatch(/^Deploying an agent needs a plan or the free trial, and this organization has neither\. Start the free trial/);
    expect((await owner.json('GET', `/api/workspaces/${owner.workspaceId}/agents`)).body.data.agents).toEqual([]);

    expect((await owner.json('POST', `/api/organizations/${owner.organizationId}/trial`)).status).toBe(201);
    const deployed = await deploy(owner, 'researcher', { description: 'Finds companies.' });
    expect(deployed.status).toBe(201);
    expect(deployed.body.data).toMatchObject({ name: 'researcher', description: 'Finds companies.', status: 'deployed', workspaceId: owner.workspaceId, stoppedAt: null, runtimeHoursThisMonth: 0 });
    expect(deployed.body.data.id).toMatch(/^agt_[0-9a-f]{24}$/);
    expect(deployed.body.data.key).toMatch(KEY);
    expect(deployed.body.data.keyHint.endsWith(deployed.body.data.key.slice(-4))).toBe(true);

    // Listed without its secret; its key is no workspace key, so the keys page does not show it.
    const listed = await owner.json('GET', `/api/workspaces/${owner.workspaceId}/agents`);
    expect(listed.body.data.agents).toEqual([expect.objectContaining({ id: deployed.body.data.id, keyId: deployed.body.data.keyId })]);
    expect(JSON.stringify(listed.body)).not.toContain(deployed.body.data.key);
    expect(listed.body.data.allowance).toMatchObject({ deployed: 1, agentsLimit: PLAN_TABLE.toolkit.caps.agents, runtimeHours: 0, runtimeHoursLimit: PLAN_TABLE.toolkit.caps.runtimeHours });
    const keys = await owner.json('GET', `/api/workspaces/${owner.workspaceId}/keys`);
    expect(keys.body.data.keys.map((key: { id: string }) => key.id)).not.toContain(deployed.body.data.keyId);
    const reveal = await owner.json('POST', `/api/workspaces/${owner.workspaceId}/keys/${deployed.body.data.keyId}/reveal`);
    expect(reveal.status).toBe(404);
    // The operator sees the same list (npm run ops -- agent list --workspace ...).
    const operator = await ops('GET', `/workspaces/${owner.workspaceId}/agents`);
    expect(operator.body.data.agents.map((agent: { id: string }) => agent.id)).toEqual([deployed.body.data.id]);
    expect(operator.body.data.allowance.deployed).toBe(1);

    const twin = await deploy(owner, 'researcher');
    expect([twin.status, twin.body.error.code]).toEqual([409, 'CONFLICT']);
    expect(twin.body.error.message).toContain("already has a deployed agent named 'researcher'");
  });

  it('holds the agents cap when deployments arrive at once: exactly the cap succeed, the rest are 402 PLAN_LIMIT_REACHED with used/limit; stopping one frees a place', async () => {
    const owner = await onPlan('solo');
    const cap = PLAN_TABLE.solo.caps.agents;
    const answers = await Promise.all(Array.from({ length: cap + 4 }, (_, index) => deploy(owner, `agent ${index}`)));
    const deployed = answers.filter((answer) => answer.status === 201);
    const refused = answers.filter((answer) => answer.status !== 201);
    expect(deployed).toHaveLength(cap);
    expect(refused).toHaveLength(4);
    for (const answer of refused) {
      expect([answer.status, answer.body.error.code]).toEqual([402, 'PLAN_LIMIT_REACHED']);
      expect(answer.body.error.message).toBe(`The Solo plan allows ${cap} deployed agents; this organization uses ${cap} of ${cap}. Upgrade the plan or stop one.`);
    }
    // A refused deployment minted no key.
    const minted = await env.DB.prepare("SELECT COUNT(*) AS n FROM api_keys WHERE workspace_id = ? AND scope = 'agent'").bind(owner.workspaceId).first<{ n: number }>();
    expect(minted!.n).toBe(cap);
    // The cap counts the organization, not the workspace.
    const second = await owner.json('POST', `/api/organizations/${owner.organizationId}/workspaces`, { name: 'Second' });
    const elsewhere = await owner.json('POST', `/api/workspaces/${second.body.data.id}/agents`, { name: 'elsewhere' });
    expect([elsewhere.status, elsewhere.body.error.code]).toEqual([402, 'PLAN_LIMIT_REACHED']);

    const stopped = await owner.json('POST', `/api/agents/${deployed[0]!.body.data.id}/stop`);
    expect(stopped.body.data).toMatchObject({ status: 'stopped', stoppedAt: expect.any(String) });
    expect((await owner.json('POST', `/api/workspaces/${second.body.data.id}/agents`, { name: 'elsewhere' })).status).toBe(201);
    // Full again: the stopped one cannot come back until another stops.
    const back = await owner.json('POST', `/api/agents/${deployed[0]!.body.data.id}/deploy`);
    expect([back.status, back.body.error.code]).toEqual([402, 'PLAN_LIMIT_REACHED']);
  });
});

describe('keys and surfaces', () => {
  it("refuses the agent's key on /v1 with 403 naming the runtime routes, and a workspace key on /runtime with 403", async () => {
    const owner = await onPlan('team');
    const agent = (await deploy(owner, 'scoped')).body.data;
    const onV1 = await refusal(await call('/v1/credits', bearer(agent.key)));
    expect(onV1).toMatchObject({ status: 403, code: 'UNAUTHORIZED' });
    expect(onV1.message).toBe(
      `This key's scope is 'agent': an agent key works only on the runtime surface, not on /v1: ${env.BASE_URL}/runtime/data/<slug>/<operation> (the operations of /v1/data) and ${env.BASE_URL}/runtime/agent.`,
    );
    expect((await refusal(await call('/v1/data/linkedin/get-company-by-domain?domain=stripe.com', bearer(agent.key)))).status).toBe(403);

    const workspaceKey = (await owner.json('POST', `/api/workspaces/${owner.workspaceId}/keys`, { name: 'rest' })).body.data.key;
    for (const path of ['/runtime/agent', '/runtime/data/linkedin/get-company-by-domain?domain=stripe.com']) {
      const refused = await refusal(await runtime(workspaceKey, path));
      expect(refused).toEqual({
        status: 403,
        code: 'UNAUTHORIZED',
        message: "This key's scope is 'workspace': /runtime/* takes a deployed agent's key (deploy one on the dashboard's Agents page); a workspace key belongs on /v1.",
      });
    }
    // An agent-scope key the operator made for no deployment has nothing to run as.
    const orphan = (await ops('POST', '/keys', { workspaceId: owner.workspaceId, scope: 'agent', name: 'orphan' })).body.data.key;
    expect(await refusal(await runtime(orphan, '/runtime/agent'))).toMatchObject({ status: 403, code: 'UNAUTHORIZED', message: expect.stringContaining('belongs to no deployed agent') });
    const unknown = await refusal(await runtime(`sluice_live_${'0'.repeat(32)}`, '/runtime/agent'));
    expect(unknown).toEqual({ status: 401, code: 'UNAUTHORIZED', message: 'Unknown API key.' });
    expect(await refusal(await call('/runtime/agent'))).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
  });
});

describe('the runtime surface', () => {
  it('runs a /v1/data operation as the agent: answered and charged alike, recorded in usage on the agent key; /runtime/agent says who it is', async () => {
    // Pay as you go has no allowance: every charge comes out of the purchased balance.
    const owner = await onPlan('payg');
    const agent = (await deploy(owner, 'caller')).body.data;
    const before = await wallet(owner.organizationId);

    const answer = await company(agent.key, 'stripe.com');
    expect(answer.status).toBe(200);
    const body = await json(answer);
    expect(body.data.name).toBe('Stripe');
    expect(body.meta.costCents).toBe(1);
    expect(answer.headers.get('ratelimit-limit')).toBe(String(PLAN_TABLE.payg.rpm));
    const after = await eventually(() => wallet(owner.organizationId), (state) => state.purchasedBalanceCents === before.purchasedBalanceCents - 1);
    expect(after.purchasedBalanceCents).toBe(before.purchasedBalanceCents - 1);

    // The same pipeline: bad input is 400 (uncharged), an unknown source 404 PROVIDER_NOT_FOUND.
    const invalid = await refusal(await runtime(agent.key, '/runtime/data/linkedin/get-company-by-domain'));
    expect(invalid).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    const unknownSource = await refusal(await runtime(agent.key, '/runtime/data/myspace/profile'));
    expect(unknownSource).toMatchObject({ status: 404, code: 'PROVIDER_NOT_FOUND', message: expect.stringContaining("No source 'myspace'") });

    const workspaceKey = (await owner.json('POST', `/api/workspaces/${owner.workspaceId}/keys`, { name: 'reader' })).body.data.key;
    const usage = await eventually(
      async () => (await json(await call('/v1/usage', bearer(workspaceKey)))).data,
      (report) => report.rows.length === 2,
    );
    expect(usage.rows).toContainEqual(expect.objectContaining({ keyId: agent.keyId, operation: 'linkedin.get-company-by-domain', status: 200, costCents: 1 }));
    expect(usage.rows).toContainEqual(expect.objectContaining({ keyId: agent.keyId, status: 400, errorCode: 'VALIDATION_ERROR', costCents: 0 }));

    const whoAmI = await runtime(agent.key, '/runtime/agent');
    expect(whoAmI.status).toBe(200);
    expect((await json(whoAmI)).data).toEqual({
      id: agent.id,
      name: 'caller',
      description: null,
      workspaceId: owner.workspaceId,
      organizationId: owner.organizationId,
      deployedAt: agent.deployedAt,
      runtimeHours: { agent: 1, used: 1, limit: PLAN_TABLE.payg.caps.runtimeHours, monthEndsAt: expect.stringMatching(/-01T00:00:00\.000Z$/) },
    });
    const listed = await owner.json('GET', `/api/workspaces/${owner.workspaceId}/agents`);
    expect(listed.body.data.agents[0].runtimeHoursThisMonth).toBe(1);
    expect(listed.body.data.allowance).toMatchObject({ deployed: 1, agentsLimit: PLAN_TABLE.payg.caps.agents, runtimeHours: 1, runtimeHoursLimit: PLAN_TABLE.payg.caps.runtimeHours });
  });

  it('refuses a stopped agent from the very next call (401), and a redeploy mints a new key while the old one stays dead', async () => {
    const owner = await onPlan('team');
    const agent = (await deploy(owner, 'stoppable')).body.data;
    expect((await company(agent.key, 'stripe.com')).status).toBe(200);

    const stopped = await owner.json('POST', `/api/agents/${agent.id}/stop`);
    expect(stopped.status).toBe(200);
    for (const response of [await company(agent.key, 'stripe.com'), await runtime(agent.key, '/runtime/agent')]) {
      expect(await refusal(response)).toEqual({ status: 401, code: 'UNAUTHORIZED', message: 'This API key has been revoked. Issue a new key in the dashboard.' });
    }
    const again = await owner.json('POST', `/api/agents/${agent.id}/stop`);
    expect(again.body.data.stoppedAt).toBe(stopped.body.data.stoppedAt);

    const redeployed = await owner.json('POST', `/api/agents/${agent.id}/deploy`);
    expect(redeployed.status).toBe(200);
    expect(redeployed.body.data).toMatchObject({ id: agent.id, status: 'deployed', stoppedAt: null });
    expect(redeployed.body.data.key).toMatch(KEY);
    expect(redeployed.body.data.key).not.toBe(agent.key);
    expect(redeployed.body.data.keyId).not.toBe(agent.keyId);
    expect((await company(redeployed.body.data.key, 'stripe.com')).status).toBe(200);
    expect((await company(agent.key, 'stripe.com')).status).toBe(401);

    const twice = await owner.json('POST', `/api/agents/${agent.id}/deploy`);
    expect([twice.status, twice.body.error.code]).toEqual([409, 'CONFLICT']);
  });

  it('leaves no live key on an agent stopped while it was being deployed again', async () => {
    const owner = await onPlan('team');
    const agent = (await deploy(owner, 'racing')).body.data;
    for (let round = 0; round < 8; round++) {
      await owner.json('POST', `/api/agents/${agent.id}/stop`);
      const [deployed, stopped] = await Promise.all([owner.json('POST', `/api/agents/${agent.id}/deploy`), owner.json('POST', `/api/agents/${agent.id}/stop`)]);
      expect([200, 409]).toContain(deployed.status);
      expect(stopped.status).toBe(200);
      const row = (await env.DB.prepare('SELECT status, key_id AS keyId FROM agents WHERE id = ?').bind(agent.id).first<{ status: string; keyId: string }>())!;
      const { results } = await env.DB.prepare("SELECT id FROM api_keys WHERE scope = 'agent' AND workspace_id = ? AND revoked_at IS NULL").bind(owner.workspaceId).all<{ id: string }>();
      expect(results.map((key) => key.id)).toEqual(row.status === 'deployed' ? [row.keyId] : []);
    }
  });

  it("reads another organization's agent as missing (404), and lets a member stop only agents they deployed", async () => {
    const owner = await onPlan('team');
    const agent = (await deploy(owner, 'private')).body.data;
    const stranger = await signUp();
    for (const path of [`/api/agents/${agent.id}/stop`, `/api/agents/${agent.id}/deploy`]) {
      const refused = await stranger.json('POST', path);
      expect([refused.status, refused.body.error.code, refused.body.error.message]).toEqual([404, 'NOT_FOUND', `No agent ${agent.id}.`]);
    }
    const list = await stranger.json('GET', `/api/workspaces/${owner.workspaceId}/agents`);
    expect([list.status, list.body.error.code]).toEqual([404, 'NOT_FOUND']);

    const member = await signUp();
    const invitation = await owner.json('POST', `/api/organizations/${owner.organizationId}/invitations`, { email: member.account.user.email });
    await member.json('POST', `/api/invitations/${invitation.body.data.token}/accept`);
    const refused = await member.json('POST', `/api/agents/${agent.id}/stop`);
    expect([refused.status, refused.body.error.code]).toEqual([403, 'UNAUTHORIZED']);
    expect(refused.body.error.message).toContain('Only owners, admins and the person who deployed it can stop this agent');
    const mine = await member.json('POST', `/api/workspaces/${owner.workspaceId}/agents`, { name: 'mine' });
    expect(mine.status).toBe(201);
    expect((await member.json('POST', `/api/agents/${mine.body.data.id}/stop`)).status).toBe(200);
  });
});

describe('runtime hours', () => {
  it("counts agent-hours against the monthly cap: the new hour past it is 402 and uncharged, calls within counted hours go on, and a new month starts from zero", async () => {
    // Pay as you go (no allowance: every charge shows in the purchased balance), with room for two agents and two hours.
    const owner = await onPlan('payg', { agents: 2, runtimeHours: 2 });
    const first = (await deploy(owner, 'first')).body.data;
    const second = (await deploy(owner, 'second')).body.data;
    // Mid-month, on the hour, so every step below stays in the month until the last.
    const start = Date.UTC(2031, 4, 14, 9, 0, 5);
    const at = (hours: number) => {
      clock.now = () => start + hours * HOUR;
    };
    let domain = 0;
    const next = () => `hours-${++domain}.example.com`;

    at(0);
    expect((await company(first.key, next())).status).toBe(200);
    at(1);
    expect((await company(first.key, next())).status).toBe(200);
    expect((await company(first.key, next())).status).toBe(200);

    // Two agent-hours of two: the second agent's first hour would be a third.
    await eventually(() => wallet(owner.organizationId), (state) => state.purchasedBalanceCents === 97);
    const refused = await refusal(await company(second.key, next()));
    expect(refused).toEqual({
      status: 402,
      code: 'PLAN_LIMIT_REACHED',
      message:
        'The Pay as you go plan allows 2 agent runtime hours a month; this organization uses 2 of 2 this month. An agent-hour is a clock hour (UTC) in which an agent made a /runtime/data call: ' +
        'calls within hours already counted go on, a new one needs room. Upgrade the plan, or wait for the count to start again on 2031-06-01 (UTC). This call was not charged.',
    });
    // Its usage row (status 402, cost 0) lands as a charge would have: the balance is still 97 cents by then.
    const row = await eventually(
      () => env.DB.prepare('SELECT cost_units AS cost, error_code AS code FROM usage WHERE key_id = ? AND status = 402').bind(second.keyId).first<{ cost: number; code: string }>(),
      (found) => found !== null,
    );
    expect(row).toEqual({ cost: 0, code: 'PLAN_LIMIT_REACHED' });
    expect((await wallet(owner.organizationId)).purchasedBalanceCents).toBe(97);

    // Within an hour already counted, by this isolate's memory and (forgotten) by the database alike.
    expect((await company(first.key, next())).status).toBe(200);
    forgetCountedHours();
    expect((await company(first.key, next())).status).toBe(200);
    at(2);
    expect((await refusal(await company(first.key, next()))).code).toBe('PLAN_LIMIT_REACHED');

    const state = await json(await runtime(first.key, '/runtime/agent'));
    expect(state.data.runtimeHours).toMatchObject({ agent: 2, used: 2, limit: 2, monthEndsAt: '2031-06-01T00:00:00.000Z' });

    // June: the count starts from zero.
    clock.now = () => Date.UTC(2031, 5, 1, 0, 30);
    expect((await company(second.key, next())).status).toBe(200);
    const june = await json(await runtime(second.key, '/runtime/agent'));
    expect(june.data.runtimeHours).toMatchObject({ agent: 1, used: 1, limit: 2, monthEndsAt: '2031-07-01T00:00:00.000Z' });
  });

  it("follows the plan's own figure without an override, and a plan change reaches the very next new hour", async () => {
    const owner = await onPlan('payg', {}, 20);
    const agent = (await deploy(owner, 'hourly')).body.data;
    const cap = PLAN_TABLE.payg.caps.runtimeHours;
    const start = Date.UTC(2033, 6, 10, 0, 10);
    for (let hour = 0; hour < cap; hour++) {
      clock.now = () => start + hour * HOUR;
      expect((await company(agent.key, `hourly-${hour}.example.com`)).status).toBe(200);
    }
    clock.now = () => start + cap * HOUR;
    const refused = await refusal(await company(agent.key, 'hourly-past.example.com'));
    expect(refused).toMatchObject({ status: 402, code: 'PLAN_LIMIT_REACHED', message: expect.stringContaining(`The Pay as you go plan allows ${cap} agent runtime hours a month; this organization uses ${cap} of ${cap} this month.`) });

    await ops('PUT', `/organizations/${owner.organizationId}/plan`, { plan: 'solo' });
    expect((await company(agent.key, 'hourly-solo.example.com')).status).toBe(200);
    expect((await json(await runtime(agent.key, '/runtime/agent'))).data.runtimeHours).toMatchObject({ used: cap + 1, limit: PLAN_TABLE.solo.caps.runtimeHours });
  });

  it('asks the database once per agent and hour in an isolate, however many calls the agent makes in it', async () => {
    const owner = await onPlan('payg');
    const agent = (await deploy(owner, 'busy')).body.data;
    clock.now = () => Date.UTC(2032, 2, 10, 15, 1);
    const batch = vi.spyOn(env.DB, 'batch');
    for (let index = 0; index < 5; index++) expect((await company(agent.key, `busy-${index}.example.com`)).status).toBe(200);
    // Only the agent-hour batches: other work of the worker (the usage outbox's flushes) batches D1 too.
    const hourBatches = batch.mock.calls.filter(([statements]) => statements.some((statement) => sqlOf(statement).includes('agent_hours')));
    expect(hourBatches.length).toBe(1);
  });
});

/** The SQL of a prepared statement (workerd's D1PreparedStatement keeps it as `statement`). */
function sqlOf(statement: D1PreparedStatement): string {
  return String((statement as unknown as { statement?: unknown }).statement ?? '');
}
