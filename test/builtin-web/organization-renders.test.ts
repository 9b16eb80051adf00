import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { clock } from '../../src/core/clock';
import type { RenderedPage, Renderer } from '../../src/core/render';
import { videoFrameWithBuiltin } from '../../src/providers/builtin-web/video-frame';
import { RENDERS_AT_ONCE } from '../../src/providers/builtin-web/render-share';
import { RENDER_QUEUE, RENDER_SLOT_RETRY_MS, RENDER_SLOT_TTL_MS } from '../../src/providers/builtin-web/organization-renders';
import { SubrequestBudget } from '../../src/core/subrequests';
import { signal, web, webEnv } from './support';

/** A renderer whose renders each wait for `release`, counting how many run at once per organization. */
function heldRenderer() {
  const running = new Map<string, number>();
  const most = new Map<string, number>();
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const forOrganization = (organizationId: string): Renderer => ({
    async render(url): Promise<RenderedPage> {
      running.set(organizationId, (running.get(organizationId) ?? 0) + 1);
      most.set(organizationId, Math.max(most.get(organizationId) ?? 0, running.get(organizationId)!));
      await released;
      running.set(organizationId, running.get(organizationId)! - 1);
      return { html: '<html></html>', finalUrl: url, status: 200, contentType: 'text/html', screenshot: { mediaType: 'image/png', base64: 'iVBORw0KGgo=' }, actionScreenshots: [], actionScrapes: [], refusedRequests: 0, blockedAds: 0 };
    },
  });
  return { forOrganization, release, running: (organizationId: string) => running.get(organizationId) ?? 0, most: (organizationId: string) => most.get(organizationId) ?? 0 };
}

const frame = (renderer: Renderer, organizationId: string, within = signal(), subrequests = new SubrequestBudget()) =>
  videoFrameWithBuiltin({ videoId: 'dQw4w9WgXcQ', second: 1 }, { env: webEnv(), signal: within, fetch: web().fetch, renderer, organizationId, subrequests });

const organization = () => `org_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`;

async function until(condition: () => boolean): Promise<void> {
  const end = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > end) throw new Error('the condition did not come true within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

describe(`an organization renders at most ${RENDERS_AT_ONCE} pages at once, whichever workspace and isolate make its calls`, () => {
  it('makes the others wait for a slot, then renders them; another organization does not wait behind it', async () => {
    const held = heldRenderer();
    const busy = organization();
    const calls = Array.from({ length: RENDERS_AT_ONCE + 2 }, () => frame(held.forOrganization(busy), busy));
    await until(() => held.running(busy) === RENDERS_AT_ONCE);
    // Past two of the waiting calls' looks at the gate, still no more than the limit.
    await new Promise((resolve) => setTimeout(resolve, RENDER_SLOT_RETRY_MS * 2 + 200));
    expect(held.running(busy)).toBe(RENDERS_AT_ONCE);

    const other = organization();
    const elsewhere = frame(held.forOrganization(other), other);
    await until(() => held.running(other) === 1);

    held.release();
    const answers = await Promise.all([...calls, elsewhere]);
    expect(answers).toHaveLength(RENDERS_AT_ONCE + 3);
    expect(held.most(busy)).toBe(RENDERS_AT_ONCE);
  });

  it("fails a call whose time runs out while it waits, saying why, and frees the slots of renders that ended", async () => {
    const held = heldRenderer();
    const busy = organization();
    const calls = Array.from({ length: RENDERS_AT_ONCE }, () => frame(held.forOrganization(busy), busy));
    await until(() => held.running(busy) === RENDERS_AT_ONCE);
    await expect(frame(held.forOrganization(busy), busy, AbortSignal.timeout(RENDER_SLOT_RETRY_MS + 300))).rejects.toThrow(`renders at most ${RENDERS_AT_ONCE} pages at once`);
    held.release();
    await Promise.all(calls);
    // Each ended render gave its slot back: the next call renders at once.
    const wallet = env.ORG_WALLET.get(env.ORG_WALLET.idFromName(busy));
    for (let slot = 0; slot < RENDERS_AT_ONCE; slot += 1) expect(await wallet.takeRenderSlot(`probe-${slot}`, 1_000, RENDERS_AT_ONCE, RENDER_QUEUE)).toBe('taken');
  });

  it(`refuses at once a call that finds ${RENDER_QUEUE.limit} of its organization's calls waiting already, rather than have it ask too`, async () => {
    const held = heldRenderer();
    const busy = organization();
    const calls = Array.from({ length: RENDERS_AT_ONCE + RENDER_QUEUE.limit }, () => frame(held.forOrganization(busy), busy));
    await until(() => held.running(busy) === RENDERS_AT_ONCE);
    // Every waiting call has asked once by now, and so holds its place.
    await new Promise((resolve) => setTimeout(resolve, RENDER_SLOT_RETRY_MS));
    // Counted in asks, not milliseconds (a loaded machine's clock says nothing): it asked the wallet once.
    const late = new SubrequestBudget();
    await expect(frame(held.forOrganization(busy), busy, signal(), late)).rejects.toMatchObject({ code: 'CONFLICT', retryAfter: 5, message: expect.stringContaining(`${RENDER_QUEUE.limit} of its calls were already waiting for them`) });
    expect(late.waiting.spent).toBe(1);
    // Another organization is not held back; the waiting calls all render once the slots free.
    const other = organization();
    const elsewhere = frame(held.forOrganization(other), other);
    held.release();
    expect(await Promise.all([...calls, elsewhere])).toHaveLength(RENDERS_AT_ONCE + RENDER_QUEUE.limit + 1);
    expect(held.most(busy)).toBe(RENDERS_AT_ONCE);
  }, 30_000);

  it('lets a waiting place go once its call stops asking', async () => {
    const wallet = env.ORG_WALLET.get(env.ORG_WALLET.idFromName(organization()));
    const start = Date.now();
    clock.now = () => start;
    for (let slot = 0; slot < RENDERS_AT_ONCE; slot += 1) expect(await wallet.takeRenderSlot(`held-${slot}`, RENDER_SLOT_TTL_MS, RENDERS_AT_ONCE, RENDER_QUEUE)).toBe('taken');
    for (let waiter = 0; waiter < RENDER_QUEUE.limit; waiter += 1) expect(await wallet.takeRenderSlot(`waiter-${waiter}`, RENDER_SLOT_TTL_MS, RENDERS_AT_ONCE, RENDER_QUEUE)).toBe('wait');
    expect(await wallet.takeRenderSlot('late', RENDER_SLOT_TTL_MS, RENDERS_AT_ONCE, RENDER_QUEUE)).toBe('full');
    // A waiter that asks again keeps its place; one that does not ask within its time gives it up.
    clock.now = () => start + RENDER_QUEUE.forMs - 1;
    expect(await wallet.takeRenderSlot('waiter-0', RENDER_SLOT_TTL_MS, RENDERS_AT_ONCE, RENDER_QUEUE)).toBe('wait');
    expect(await wallet.takeRenderSlot('late', RENDER_SLOT_TTL_MS, RENDERS_AT_ONCE, RENDER_QUEUE)).toBe('full');
    clock.now = () => start + RENDER_QUEUE.forMs;
    expect(await wallet.takeRenderSlot('late', RENDER_SLOT_TTL_MS, RENDERS_AT_ONCE, RENDER_QUEUE)).toBe('wait');
  });

  it('frees a slot whose render never said it ended once its time is up', async () => {
    const wallet = env.ORG_WALLET.get(env.ORG_WALLET.idFromName(organization()));
    const start = Date.now();
    clock.now = () => start;
    for (let slot = 0; slot < RENDERS_AT_ONCE; slot += 1) expect(await wallet.takeRenderSlot(`lost-${slot}`, RENDER_SLOT_TTL_MS, RENDERS_AT_ONCE, RENDER_QUEUE)).toBe('taken');
    expect(await wallet.takeRenderSlot('next', RENDER_SLOT_TTL_MS, RENDERS_AT_ONCE, RENDER_QUEUE)).toBe('wait');
    clock.now = () => start + RENDER_SLOT_TTL_MS - 1;
    expect(await wallet.takeRenderSlot('next', RENDER_SLOT_TTL_MS, RENDERS_AT_ONCE, RENDER_QUEUE)).toBe('wait');
    clock.now = () => start + RENDER_SLOT_TTL_MS;
    expect(await wallet.takeRenderSlot('next', RENDER_SLOT_TTL_MS, RENDERS_AT_ONCE, RENDER_QUEUE)).toBe('taken');
  });
});
