import { describe, expect, it } from 'vitest';
import { bearer, call, companyByDomain, credit, json, provision } from '../support/api';
import { holdClockInOneMinute } from '../support/held-minute';

/** Spec "Request rate": pay as you go allows 60 requests a minute. */
const PAYG_CEILING = 60;

holdClockInOneMinute(10_000);

function credits(key: string): Promise<Response> {
  return call('/v1/credits', bearer(key));
}

describe('/v1/credits is not rate limited', () => {
  it('takes no slot of the window, and still answers 200 once a metered call was refused 429 RATE_LIMITED', async () => {
    const account = await provision({ plan: 'payg' });
    await credit(account.organizationId, { purchasedCents: 100 });

    // Ten reads before any metered call: the window is still whole afterwards.
    for (let read = 0; read < 10; read++) expect((await credits(account.key)).status).toBe(200);
    const metered = await Promise.all(Array.from({ length: PAYG_CEILING }, () => companyByDomain(account.key, 'stripe.com')));
    expect(metered.map((response) => response.status)).toEqual(Array(PAYG_CEILING).fill(200));

    const refused = await companyByDomain(account.key, 'stripe.com');
    expect(refused.status).toBe(429);
    expect((await json(refused)).error.code).toBe('RATE_LIMITED');

    for (let read = 0; read < 3; read++) {
      const response = await credits(account.key);
      expect(response.status).toBe(200);
      expect((await json(response)).data).toMatchObject({ organizationId: account.organizationId, plan: 'payg', purchasedBalanceCents: 100 - PAYG_CEILING });
    }
  });
});
