import { describe, expect, it } from 'vitest';
import { companyByDomain, credit, json, provision } from '../support/api';

async function funded() {
  const account = await provision();
  await credit(account.organizationId, { purchasedCents: 10 });
  return account;
}

describe('the response cache', () => {
  it('answers an identical call from cache with meta.cached true, at the same price', async () => {
    const account = await funded();
    const fresh = await json(await companyByDomain(account.key, 'counter.com'));
    const again = await json(await companyByDomain(account.key, 'counter.com'));
    expect(fresh.meta.cached).toBe(false);
    expect(again.meta.cached).toBe(true);
    expect(again.data).toEqual(fresh.data);
    expect(again.meta.costCents).toBe(1);
    expect(again.meta.purchasedBalanceCents).toBe(8);
  });

  it('keeps one organization\u2019s answers from another', async () => {
    const first = await funded();
    const second = await funded();
    const mine = await json(await companyByDomain(first.key, 'counter.com'));
    const theirs = await json(await companyByDomain(second.key, 'counter.com'));
    expect(theirs.meta.cached).toBe(false);
    expect(theirs.data.followerCount).not.toBe(mine.data.followerCount);
  });

  it('never caches a failure', async () => {
    const account = await funded();
    // The fake fails the first call for a flaky domain and answers the ones after.
    const domain = `flaky.${crypto.randomUUID().slice(0, 8)}.com`;
    expect((await companyByDomain(account.key, domain)).status).toBe(502);
    const retried = await json(await companyByDomain(account.key, domain));
    expect(retried.success).toBe(true);
    expect(retried.meta.cached).toBe(false);
    expect((await json(await companyByDomain(account.key, domain))).meta.cached).toBe(true);
  });
});
