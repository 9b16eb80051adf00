import { expect } from 'vitest';
import { call, json } from '../support/api';

/** A request to the workspace databases' REST routes (/v1/db) with a workspace key. */
export function db(key: string, method: string, path: string, body?: unknown) {
  return call(`/v1/db${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** Creates a database and answers its id. */
export async function createDb(key: string, name: string): Promise<string> {
  const response = await db(key, 'POST', '/databases', { name });
  expect(response.status, await response.clone().text()).toBe(201);
  return (await json(response)).data.id;
}

/** Runs a statement (or a script) in a database and answers status, headers and body. */
export async function query(key: string, id: string, sql: string, params?: unknown[]) {
  const response = await db(key, 'POST', `/databases/${id}/query`, { sql, ...(params ? { params } : {}) });
  return { status: response.status, headers: response.headers, body: await json(response) };
}
