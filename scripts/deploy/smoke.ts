/**
 * The smoke test after a deploy: what a person or an agent reaches first answers, from the build just deployed.
 * Each URL is tried a few times (a new workers.dev route or custom domain takes seconds to answer); a failure
 * names the URL and what was wrong.
 */
import type { PublicUrls } from './render';

export interface SmokeFailure {
  url: string;
  reason: string;
}

interface Probe {
  url: string;
  /** What is wrong with the answer, or undefined when it is right. */
  judge(response: Response, body: string): string | undefined;
}

const json = (body: string): Record<string, unknown> | undefined => {
  try {
    const value = JSON.parse(body) as unknown;
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
};

export function smokeProbes(urls: PublicUrls, build: string): Probe[] {
  const mcpOrigin = new URL(urls.MCP_URL).origin;
  const health = (url: string): Probe => ({
    url,
    judge: (response, body) => {
      if (response.status !== 200) return `HTTP ${response.status}`;
      const served = (json(body)?.data as { build?: unknown } | undefined)?.build;
      return served === build ? undefined : `serves build ${JSON.stringify(served)}, not ${build}`;
    },
  });
  return [
    health(`${urls.BASE_URL}/health`),
    health(`${mcpOrigin}/health`),
    health(`${urls.APP_URL}/health`),
    {
      url: `${urls.BASE_URL}/v1/platforms`,
      judge: (response, body) => (response.status !== 200 ? `HTTP ${response.status}` : json(body)?.success === true ? undefined : 'not the API envelope'),
    },
    {
      url: `${mcpOrigin}/.well-known/oauth-authorization-server`,
      judge: (response, body) => {
        if (response.status !== 200) return `HTTP ${response.status}`;
        const issuer = json(body)?.issuer;
        return issuer === mcpOrigin ? undefined : `names issuer ${JSON.stringify(issuer)}, not ${mcpOrigin}`;
      },
    },
    {
      url: `${urls.APP_URL}/signup`,
      judge: (response, body) =>
        response.status !== 200 ? `HTTP ${response.status}` : !(response.headers.get('content-type') ?? '').includes('text/html') || !/<form/i.test(body) ? 'not the sign-up page' : undefined,
    },
  ];
}

export async function smokeTest(
  urls: PublicUrls,
  build: string,
  options: { fetch: typeof fetch; sleep?: (ms: number) => Promise<void>; log?: (line: string) => void; attempts?: number; pauseMs?: number },
): Promise<SmokeFailure[]> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const attempts = options.attempts ?? 6;
  const failures: SmokeFailure[] = [];
  for (const probe of smokeProbes(urls, build)) {
    let reason: string | undefined;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      try {
        const response = await options.fetch(probe.url, { redirect: 'manual', signal: AbortSignal.timeout(15_000) });
        reason = probe.judge(response, await response.text());
      } catch (error) {
        reason = `no answer (${(error as Error).message})`;
      }
      if (reason === undefined || attempt === attempts) break;
      await sleep(options.pauseMs ?? 5_000);
    }
    options.log?.(`${reason === undefined ? 'ok  ' : 'FAIL'} ${probe.url}${reason ? `: ${reason}` : ''}`);
    if (reason !== undefined) failures.push({ url: probe.url, reason });
  }
  return failures;
}
