/**
 * One local stack for the end-to-end files (dashboard, mcp, mcp-oauth, reference, render, jobs): the
 * professional-network vendor faked on loopback, DataForSEO configured at a port where nothing listens (so an
 * unreachable vendor is a real refused connection), no other vendor; instead of a stack each: starting a stack
 * was most of those files' time (about 30 s of a busy 2-core machine each). Each file makes accounts of its own.
 *
 * The node project's globalSetup (vitest.config.mts) runs `setup` in vitest's own process, where one loopback
 * route answers the stack: the first file to ask starts it, later ones get the same, and it stops when the run
 * ends. A run without those files starts nothing.
 */
import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inject } from 'vitest';
import type { TestProject } from 'vitest/node';
import type { Stack } from '../../../scripts/stack';
import { startFakeLinkedin } from '../../fakes/linkedin-loopback';
import { isolatedEnv, tempDir } from './processes';
import { startRenderSite } from './render-site';

/** What a file gets of the shared stack. */
export interface SharedStack {
  urls: Stack['urls'];
  settings: Stack['settings'];
  /** The stack's home, where a file may keep files of its own. */
  home: string;
  /** The loopback site the rendering tests scrape (render-site.ts), a private host the stack may fetch. */
  renderSite: string;
  /** The professional-network vendor's stand-in, which also serves public-looking pages the stack may scrape. */
  professionalNetwork: string;
  /** The local Browser Rendering service's `host:port` (scripts/browser-service.ts), whose `/v1/sessions` lists chromium sessions. */
  browser?: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    sharedStackUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let started: Promise<{ shared: SharedStack; stop: () => Promise<void> }> | undefined;
  const start = async () => {
    const home = tempDir('shared');
    const upstream = await startFakeLinkedin();
    const site = await startRenderSite();
    try {
      // Loaded on first use: a run that never asks does not pay for wrangler and Miniflare.
      const { startStack } = await import('../../../scripts/stack');
      const stack = await startStack({
        env: {
          ...(await isolatedEnv(home)),
          // The suite takes every core: an idle-priority chromium would not get to start.
          BROWSER_PRIORITY: 'normal',
          LINKEDIN_API_KEY: 'fake-key',
          LINKEDIN_API_HOST: 'linkedin.fake',
          LINKEDIN_BASE_URL: upstream.url,
          SCRAPE_ALLOW_PRIVATE_HOSTS: `${site.hostPort},${new URL(upstream.url).host}`,
          // Nothing listens there: every DataForSEO call is refused at the TCP level, which the fakes inside
          // vitest's workerd cannot produce (Miniflare turns a fake that throws into an HTTP 500). Port 1, not a
          // free port found now: the kernel hands ephemeral ports to whatever asks next, and in a CI run another
          // file's server took the one found here and answered 404 (a run of 2026-11-28); port 1 is never handed out.
          DATAFORSEO_LOGIN: 'fake-login',
          DATAFORSEO_PASSWORD: 'fake-password',
          DATAFORSEO_BASE_URL: 'http://127.0.0.1:1',
        },
      });
      const stop = async () => {
        await stack.stop();
        upstream.stop();
        site.stop();
        rmSync(home, { recursive: true, force: true });
      };
      return { shared: { urls: stack.urls, settings: stack.settings, home, renderSite: site.url, professionalNetwork: upstream.url, ...(stack.browser ? { browser: stack.browser.address } : {}) }, stop };
    } catch (error) {
      upstream.stop();
      site.stop();
      rmSync(home, { recursive: true, force: true });
      throw error;
    }
  };
  // A start that fails is tried once more, its error printed: one CI run's start failed (2026-12-02) with no more
  // than "false == true" from a bare assert, which a rerun did not meet, and every file sharing the stack failed on
  // it. A second failure fails them. `npm start` itself is tested without a second try (start.test.ts).
  const startOnceMore = () =>
    start().catch((error: unknown) => {
      console.error(`The shared stack did not start; trying once more. What failed:\n${whatFailed(error)}`);
      return start();
    });
  const server = createServer((_request, response) => {
    (started ??= startOnceMore()).then(
      ({ shared }) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(shared)),
      (error: unknown) => response.writeHead(500).end(whatFailed(error)),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  project.provide('sharedStackUrl', `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  return async () => {
    server.close();
    await (await started?.catch(() => undefined))?.stop();
  };
}

/** A failed start said with its stack, not only its message: a bare `assert` says no more than "false == true". */
function whatFailed(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

/** The shared stack, started by the first file that asks: ask in beforeAll, whose timeout allows for the start. */
export async function sharedStack(): Promise<SharedStack> {
  const response = await fetch(inject('sharedStackUrl'));
  if (!response.ok) throw new Error(`The shared stack did not start: ${await response.text()}`);
  return (await response.json()) as SharedStack;
}
