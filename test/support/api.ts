import { createExecutionContext } from 'cloudflare:test';
import { expect } from 'vitest';
import { env } from 'cloudflare:workers';
import worker from '../../src/api';
import type { KeyScope } from '../../src/core/keys';
import type { Plan } from '../../src/core/plans';

export const OPS_TOKEN = 'test-ops-token';

/**
 * A request to the api worker under test, through its real fetch handler, with the worker's bindings
 * and an execution context of its own. (The pool's `exports.default.fetch` slows down with every
 * request made through it in a file, quadratically: 200 requests to /health took 27 s by the 800th.)
 */
export function call(path: string, init: RequestInit = {}): Promise<Response> {
  return Promise.resolve(worker.fetch(new Request(`http://sluice.test${path}`, init), env, createExecutionContext()));
}

export async function json<T = any>(response: Response): Promise<T> {
  return (await response.json()) as T;
}

export async function ops<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const response = await call(`/ops/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${OPS_TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await json<T>(response) };
}

export interface Provisioned {
  organizationId: string;
  workspaceId: string;
  keyId: string;
  key: string;
}

/** A fresh organization, workspace and key through the operator API, as an installation would make them. */
export async function provision(options: { plan?: Plan | null; scope?: KeyScope } = {}): Promise<Provisioned> {
  const organization = await ops('POST', '/organizations', { name: 'Test org', plan: options.plan === undefined ? 'payg' : options.plan });
  const workspace = await ops('POST', '/workspaces', { organizationId: organization.body.data.id, name: 'Test workspace' });
  const key = await ops('POST', '/keys', { workspaceId: workspace.body.data.id, scope: options.scope ?? 'workspace', name: 'test' });
  return { organizationId: organization.body.data.id, workspaceId: workspace.body.data.id, keyId: key.body.data.id, key: key.body.data.key };
}

/** A request carrying `key` as its bearer; with `body`, sent as JSON; `headers` added to it (an Origin, say). */
export function bearer(key: string, request: { method?: string; body?: unknown; headers?: Record<string, string> } = {}): RequestInit {
  const { method, body, headers = {} } = request;
  return {
    ...(method === undefined ? {} : { method }),
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  };
}

/** Credits the organization's wallet through the operator API. */
export async function credit(organizationId: string, cents: { purchasedCents?: number; subscriptionCents?: number }) {
  const response = await ops('POST', `/organizations/${organizationId}/wallet/credit`, cents);
  if (response.status !== 200) throw new Error(`credit failed: ${JSON.stringify(response.body)}`);
  return response.body.data;
}

export async function wallet(organizationId: string) {
  return (await ops('GET', `/organizations/${organizationId}/wallet`)).body.data;
}

export function companyByDomain(key: string, domain: string): Promise<Response> {
  return call(`/v1/data/linkedin/get-company-by-domain?domain=${encodeURIComponent(domain)}`, bearer(key));
}

/** Waits (up to 3 s) for what lands off the response path: captures, and usage rows flushed from the wallet's outbox. */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, attempts = 300): Promise<T> {
  let value = await read();
  for (let attempt = 0; attempt < attempts && !done(value); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    value = await read();
  }
  return value;
}

/** A POST of a JSON body to a tool endpoint, as a client would send it. */
export function tool(key: string, path: string, body: unknown): Promise<Response> {
  return call(path, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** A fresh account on a plan with purchased balance to spend. */
export async function funded(cents = 1000, plan: Plan = 'business'): Promise<Provisioned> {
  const account = await provision({ plan });
  await credit(account.organizationId, { purchasedCents: cents });
  return account;
}

/** A failed call left the balance as it was, nothing held, and no capture in the ledger. */
export async function expectReleasedUncharged(organizationId: string, purchasedCents: number): Promise<void> {
  const after = await wallet(organizationId);
  expect(after).toMatchObject({ purchasedBalanceCents: purchasedCents, heldCents: 0 });
  expect(after.ledger.filter((entry: { kind: string }) => entry.kind === 'capture')).toEqual([]);
}
