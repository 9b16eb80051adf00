import { describe, expect, it } from 'vitest';
import { bearer, call, eventually, expectReleasedUncharged, funded, json, tool, wallet } from '../support/api';

/** A query naming a parameter twice: read as one value it was a guess, read as a list a misleading type error. */
describe('a query parameter sent more than once', () => {
  it('is refused on a data GET with VALIDATION_ERROR naming it, before any call is made or charged', async () => {
    const account = await funded(10, 'payg');
    const response = await call('/v1/data/linkedin/get-company-by-domain?domain=stripe.com&domain=acme.com', bearer(account.key));
    expect(response.status).toBe(400);
    const { error } = await json(response);
    expect(error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'domain', location: 'query', message: 'Sent more than once: send it once.' }] });
    // Sent once, the same call goes through, and its cent is the only one the wallet is charged.
    expect((await call('/v1/data/linkedin/get-company-by-domain?domain=stripe.com', bearer(account.key))).status).toBe(200);
    const charged = await eventually(() => wallet(account.organizationId), (state) => state.purchasedBalanceCents < 10);
    expect(charged.purchasedBalanceCents).toBe(9);
  });

  it('is named as sent twice on a route with a typed query, rather than as the wrong type; an unknown one stays unknown', async () => {
    const account = await funded(10);
    const usage = await json(await call('/v1/usage?limit=5&limit=6', bearer(account.key)));
    expect(usage.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'limit', location: 'query', message: 'Sent more than once: send it once.' }] });
    const credits = await json(await call('/v1/credits?verbose=1&verbose=2', bearer(account.key)));
    expect(credits.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'verbose', location: 'query', message: 'Unknown field.' }] });
  });
});

describe('an early refusal names every offending field, the schema\'s own beside it', () => {
  it('a repeated parameter and an unknown one, in one answer', async () => {
    const account = await funded(10, 'payg');
    const response = await call('/v1/data/linkedin/get-company-by-domain?domain=a.com&domain=b.com&x=1', bearer(account.key));
    expect(response.status).toBe(400);
    expect((await json(response)).error.details).toEqual([
      { field: 'domain', location: 'query', message: 'Sent more than once: send it once.' },
      { field: 'x', location: 'query', message: 'Unknown field.' },
    ]);
  });

  it('a query on a body operation, and the body\'s own faults', async () => {
    const account = await funded(10, 'payg');
    const response = await tool(account.key, '/scrape?formats=html', { timeout: 5 });
    expect(response.status).toBe(400);
    const { details } = (await json(response)).error;
    expect(details.map((detail: { location: string; field: string }) => `${detail.location} ${detail.field}`).sort()).toEqual(['body timeout', 'body url', 'query formats']);
  });
});

describe('a query on an operation that takes a JSON body', () => {
  it('is refused with VALIDATION_ERROR naming each parameter, nothing run or charged', async () => {
    const account = await funded(10, 'payg');
    const response = await tool(account.key, '/scrape?formats=html&onlyMainContent=false', { url: 'https://example.com/' });
    expect(response.status).toBe(400);
    const { error } = await json(response);
    expect(error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [
        { field: 'formats', location: 'query', message: 'Not read: this operation takes its input in the JSON body.' },
        { field: 'onlyMainContent', location: 'query', message: 'Not read: this operation takes its input in the JSON body.' },
      ],
    });
    await expectReleasedUncharged(account.organizationId, 10);
  });
});

describe('HEAD on a metered operation', () => {
  it('is refused with ENDPOINT_NOT_FOUND and Allow: GET, neither run nor charged, while GET is', async () => {
    const account = await funded(10, 'payg');
    const path = '/v1/data/linkedin/get-company-by-domain?domain=stripe.com';
    const head = await call(path, { method: 'HEAD', headers: { authorization: `Bearer ${account.key}` } });
    expect(head.status).toBe(404);
    expect(head.headers.get('allow')).toBe('GET');
    expect(head.headers.get('ratelimit-remaining')).toBeNull();
    // GET after it: the window counts one call, and the wallet is charged its one cent only.
    const get = await call(path, bearer(account.key));
    expect(get.status).toBe(200);
    expect(get.headers.get('ratelimit-remaining')).toBe('59');
    const charged = await eventually(() => wallet(account.organizationId), (state) => state.purchasedBalanceCents < 10);
    expect(charged.purchasedBalanceCents).toBe(9);
  });
});
