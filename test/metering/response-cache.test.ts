import { afterEach, describe, expect, it, vi } from 'vitest';
import { companyByDomain, credit, json, provision } from '../support/api';
import { watchCacheStores } from '../support/cache';
import { answerFromCache, lookUpAnswer, WRITTEN_OUT_CHARS } from '../../src/services/response-cache';

async function funded() {
  const account = await provision();
  await credit(account.organizationId, { purchasedCents: 10 });
  return account;
}

afterEach(() => {
  vi.restoreAllMocks();
});


describe('the response cache', () => {
  it('stores the first answer and answers the repeat from cache, at the same price', async () => {
    const account = await funded();
    const stores = watchCacheStores();
    const first = await json(await companyByDomain(account.key, 'counter.com'));
    await stores.stored(1);
    const second = await json(await companyByDomain(account.key, 'counter.com'));
    expect([first.meta.cached, second.meta.cached]).toEqual([false, true]);
    expect(second.data).toEqual(first.data);
    expect(second.meta.costCents).toBe(1);
  });

  it('looks an input up even the first time this isolate sees it: another isolate may have stored it', async () => {
    const account = await funded();
    const match = vi.spyOn(caches.default, 'match');
    const put = vi.spyOn(caches.default, 'put');
    const domain = `once-${crypto.randomUUID().slice(0, 8)}.com`;
    expect((await companyByDomain(account.key, domain)).status).toBe(200);
    expect(match).toHaveBeenCalledTimes(1);
    await vi.waitFor(() => expect(put).toHaveBeenCalledTimes(1));
  });

  it('serves no stored answer to a call the gate refuses: the lookup runs beside the gate, and only a held call reads it', async () => {
    const account = await provision();
    await credit(account.organizationId, { purchasedCents: 1 });
    const stores = watchCacheStores();
    expect((await companyByDomain(account.key, 'counter.com')).status).toBe(200);
    await stores.stored(1);
    const match = vi.spyOn(caches.default, 'match');
    const refused = await json(await companyByDomain(account.key, 'counter.com'));
    expect(refused.error.code).toBe('INSUFFICIENT_CREDITS');
    expect(refused.data).toBeUndefined();
    expect(match).toHaveBeenCalledTimes(1);
  });

  it('keeps one organization\u2019s answers from another', async () => {
    const first = await funded();
    const second = await funded();
    const stores = watchCacheStores();
    const mine = await json(await companyByDomain(first.key, 'counter.com'));
    await stores.stored(1);
    expect((await json(await companyByDomain(first.key, 'counter.com'))).meta.cached).toBe(true);
    const theirs = await json(await companyByDomain(second.key, 'counter.com'));
    expect(theirs.meta.cached).toBe(false);
    expect(theirs.data.followerCount).not.toBe(mine.data.followerCount);
  });

  it('never caches a failure', async () => {
    const account = await funded();
    const stores = watchCacheStores();
    // The fake fails the first call for a flaky domain and answers the ones after.
    const domain = `flaky.${crypto.randomUUID().slice(0, 8)}.com`;
    expect((await companyByDomain(account.key, domain)).status).toBe(502);
    // Looked up again: the failure is not there, and this answer is stored.
    const retried = await json(await companyByDomain(account.key, domain));
    expect(retried.success).toBe(true);
    expect(retried.meta.cached).toBe(false);
    await stores.stored(1);
    expect((await json(await companyByDomain(account.key, domain))).meta.cached).toBe(true);
  });
});

describe("the response cache's addresses", () => {
  /** One call through the cache with `input`: whether it was found there, and the answer (a new one each time it is computed). */
  async function ask(input: Record<string, unknown>, organizationId = `org_${crypto.randomUUID().slice(0, 8)}`) {
    const stores: Promise<unknown>[] = [];
    const lookup = lookUpAnswer({ organizationId, operation: 'test.addresses', input }, 60_000);
    const { result, cached } = await answerFromCache(lookup, (store) => stores.push(store), async () => ({ data: { answer: crypto.randomUUID() } }));
    await Promise.all(stores);
    return { cached, data: result.data, organizationId };
  }

  it('finds a short input again in any field order, and keeps apart inputs a character apart, slashes and question marks included', async () => {
    const first = await ask({ domain: 'a.example', country: 'US' });
    const again = await ask({ country: 'US', domain: 'a.example' }, first.organizationId);
    expect([first.cached, again.cached]).toEqual([false, true]);
    expect(again.data).toEqual(first.data);
    const [one, two] = [{ url: 'https://a.example/x?y=1#top' }, { url: 'https://a.example/x?y=2#top' }];
    const answers = [await ask(one, first.organizationId), await ask(two, first.organizationId), await ask(one, first.organizationId), await ask(two, first.organizationId)];
    expect(answers.map((answer) => answer.cached)).toEqual([false, false, true, true]);
    expect([answers[2]!.data, answers[3]!.data]).toEqual([answers[0]!.data, answers[1]!.data]);
  });

  it('finds an input as long as the written-out limit, and longer ones by their digest, again in any field order, each apart from the rest', async () => {
    // Canonical JSON {"q":"…"} is eight characters more than its text.
    const atLimit = { q: 'x'.repeat(WRITTEN_OUT_CHARS - 8) };
    const longer = { q: 'x'.repeat(WRITTEN_OUT_CHARS - 7) };
    const long = { q: 'x'.repeat(1_000), n: 1 };
    const differentAtTheEnd = { q: `${'x'.repeat(999)}y`, n: 1 };
    const organizationId = (await ask({ start: true })).organizationId;
    const firsts = [await ask(atLimit, organizationId), await ask(longer, organizationId), await ask(long, organizationId), await ask(differentAtTheEnd, organizationId)];
    expect(firsts.map((answer) => answer.cached)).toEqual([false, false, false, false]);
    const agains = [await ask(atLimit, organizationId), await ask(longer, organizationId), await ask({ n: 1, q: long.q }, organizationId), await ask(differentAtTheEnd, organizationId)];
    expect(agains.map((answer) => answer.cached)).toEqual([true, true, true, true]);
    expect(agains.map((answer) => answer.data)).toEqual(firsts.map((answer) => answer.data));
  });
});
