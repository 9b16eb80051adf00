import { describe, expect, it } from 'vitest';
import { form, registerClient } from './support';

/**
 * Grant types of RFC 6749 and its extensions that the token endpoint does not publish: it answers each with
 * 400 `unsupported_grant_type` (RFC 6749 section 5.2), whatever else the request carries.
 */
const UNPUBLISHED_GRANTS: [string, Record<string, string>][] = [
  ['client_credentials', { scope: 'mcp' }],
  ['password', { username: 'someone@example.com', password: 'a long enough passphrase', scope: 'mcp' }],
  ['implicit', {}],
  ['urn:ietf:params:oauth:grant-type:device_code', { device_code: 'device-code' }],
  ['urn:ietf:params:oauth:grant-type:jwt-bearer', { assertion: 'eyJhbGciOiJub25lIn0.e30.' }],
  ['urn:ietf:params:oauth:grant-type:token-exchange', { subject_token: 'token', subject_token_type: 'urn:ietf:params:oauth:token-type:access_token' }],
];

describe('POST /oauth/token accepts only the grants it publishes (authorization_code, refresh_token)', () => {
  it.each(UNPUBLISHED_GRANTS)('answers grant_type %s with 400 unsupported_grant_type, uncached', async (grantType, fields) => {
    const clientId = await registerClient();
    const response = await form('/oauth/token', { grant_type: grantType, client_id: clientId, ...fields });
    expect(response.status).toBe(400);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toEqual({ error: 'unsupported_grant_type', error_description: expect.any(String) });
    expect(body).not.toHaveProperty('access_token');
  });

  it.each([
    ['without grant_type', {}],
    ['with an empty grant_type', { grant_type: '' }],
  ])('answers a request %s with 400 invalid_request naming it', async (_, fields) => {
    const clientId = await registerClient();
    const response = await form('/oauth/token', { client_id: clientId, code: 'a-code', ...fields });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'invalid_request', error_description: 'grant_type is required.' });
  });
});
