import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clock } from '../src/core/clock';
import { ReadBehind } from '../src/core/read-behind';

/**
 * The isolate's memory of D1 reads that a call never waits to read again (core/read-behind.ts): observed
 * with the injectable clock and reads that stay pending until the test lets them answer.
 */
const realNow = clock.now;
let now = 0;
beforeEach(() => {
  now = 1_000_000;
  clock.now = () => now;
});
afterEach(() => {
  clock.now = realNow;
});

/** A read the test answers when it chooses, and counts of how often each kind was asked. */
function pendingRead<V>() {
  let answer!: (value: V) => void;
  let fail!: (reason: unknown) => void;
  const promise = new Promise<V>((resolve, reject) => {
    answer = resolve;
    fail = reject;
  });
  let asked = 0;
  return {
    read: () => {
      asked += 1;
      return promise;
    },
    answer,
    fail,
    asked: () => asked,
  };
}

/** A waitUntil that keeps what it was handed, so the test can wait for the reads begun beside calls. */
function background() {
  const promises: Array<Promise<unknown>> = [];
  return { waitUntil: (promise: Promise<unknown>) => void promises.push(promise), settled: () => Promise.all(promises), count: () => promises.length };
}

const unreachable = () => Promise.reject(new Error('this call should not have read'));
const memory = () => new ReadBehind<string | null>({ name: 'a test value', freshMs: 30_000, usableMs: 600_000, maxEntries: 3, keeps: (value) => value !== null });

/** A memory that has read `value` for 'k' once, now, and the waitUntil its calls hand their reads to. */
async function readOnce(value: string) {
  const values = memory();
  const jobs = background();
  await values.get('k', async () => value, jobs.waitUntil);
  return { values, jobs };
}

describe('a value read behind the calls that use it', () => {
  it('answers from memory within its fresh time, without reading', async () => {
    const values = memory();
    const jobs = background();
    expect(await values.get('k', async () => 'first', jobs.waitUntil)).toBe('first');
    now += 29_000;
    expect(await values.get('k', unreachable, jobs.waitUntil)).toBe('first');
    expect(jobs.count()).toBe(0);
  });

  it('answers a value past its fresh time at once, reads it again beside the call, and answers what that read found next', async () => {
    const { values, jobs } = await readOnce('first');
    now += 31_000;
    const reread = pendingRead<string>();
    // The read is still pending: the call is answered anyway.
    expect(await values.get('k', reread.read, jobs.waitUntil)).toBe('first');
    expect(reread.asked()).toBe(1);
    reread.answer('second');
    await jobs.settled();
    expect(await values.get('k', unreachable, jobs.waitUntil)).toBe('second');
  });

  it('reads a value again once at a time, however many calls find it old', async () => {
    const { values, jobs } = await readOnce('first');
    now += 31_000;
    const reread = pendingRead<string>();
    for (let call = 0; call < 5; call++) expect(await values.get('k', reread.read, jobs.waitUntil)).toBe('first');
    expect(reread.asked()).toBe(1);
    reread.answer('second');
    await jobs.settled();
  });

  it('forgets a value the read beside a call no longer finds, so the next call waits for its own read', async () => {
    const { values, jobs } = await readOnce('key');
    now += 31_000;
    // Read again and found revoked (or gone): not kept.
    expect(await values.get('k', async () => null, jobs.waitUntil)).toBe('key');
    await jobs.settled();
    const next = pendingRead<string | null>();
    const answered = values.get('k', next.read, jobs.waitUntil);
    expect(next.asked()).toBe(1);
    next.answer(null);
    expect(await answered).toBeNull();
  });

  it('makes a call wait for D1 when its value has not been read for the usable time', async () => {
    const { values, jobs } = await readOnce('first');
    now += 600_000;
    const read = pendingRead<string>();
    let answered: string | null | undefined;
    const call = values.get('k', read.read, jobs.waitUntil).then((value) => (answered = value));
    await Promise.resolve();
    expect(answered).toBeUndefined();
    read.answer('second');
    await call;
    expect(answered).toBe('second');
    expect(jobs.count()).toBe(0);
  });

  it('keeps answering the old value when the read beside a call fails, and tries again a little later', async () => {
    const { values, jobs } = await readOnce('first');
    now += 31_000;
    const failing = pendingRead<string>();
    expect(await values.get('k', failing.read, jobs.waitUntil)).toBe('first');
    failing.fail(new Error('D1 is unavailable'));
    await jobs.settled();
    // Straight after the failure, no second read; two seconds on, one.
    expect(await values.get('k', failing.read, jobs.waitUntil)).toBe('first');
    expect(failing.asked()).toBe(1);
    now += 2_000;
    expect(await values.get('k', async () => 'second', jobs.waitUntil)).toBe('first');
    await jobs.settled();
    expect(await values.get('k', unreachable, jobs.waitUntil)).toBe('second');
  });

  it('does not put back what it was told to forget while a read was under way', async () => {
    const { values, jobs } = await readOnce('before the switch');
    now += 31_000;
    const reread = pendingRead<string>();
    await values.get('k', reread.read, jobs.waitUntil);
    values.forget();
    reread.answer('before the switch');
    await jobs.settled();
    expect(await values.get('k', async () => 'after the switch', jobs.waitUntil)).toBe('after the switch');
  });

  it('lets the value read longest ago go when it is full', async () => {
    const values = memory();
    const jobs = background();
    for (const key of ['a', 'b', 'c']) {
      await values.get(key, async () => key, jobs.waitUntil);
      now += 1_000;
    }
    // 'a' is read again beside a call, so 'b' is now the one read longest ago.
    now += 28_500;
    await values.get('a', async () => 'a again', jobs.waitUntil);
    await jobs.settled();
    await values.get('d', async () => 'd', jobs.waitUntil);
    expect(await values.get('a', unreachable, jobs.waitUntil)).toBe('a again');
    expect(await values.get('c', unreachable, jobs.waitUntil)).toBe('c');
    expect(await values.get('b', async () => 'b read afresh', jobs.waitUntil)).toBe('b read afresh');
  });
});

