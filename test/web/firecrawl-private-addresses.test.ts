import { describe, expect, it } from 'vitest';
import { lastReceivedBy } from '../fakes/firecrawl';
import { expectReleasedUncharged, funded, json, tool } from '../support/api';

/**
 * Firecrawl fetches what it is sent from its own network, so a URL that is private on its face (an internal
 * address, localhost, a cloud metadata service) is refused before it is sent, as the built-in provider
 * refuses it: 400 on `url`, nothing sent, nothing charged.
 */
const PRIVATE_ON_ITS_FACE = [
  'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
  'http://metadata.google.internal/computeMetadata/v1/',
  'http://localhost:8080/admin',
  'http://10.0.0.5/',
  'http://[::1]/',
  'http://[::ffff:127.0.0.1]/',
];

describe('a URL Firecrawl would fetch inside a private network', () => {
  it.each(['/scrape', '/map'].flatMap((path) => PRIVATE_ON_ITS_FACE.map((url) => [path, url] as const)))('%s refuses %s with 400 on url, sends nothing and charges nothing', async (path, target) => {
    const account = await funded(10, 'payg');
    // A fragment of its own makes the URL this test's alone in the fake's record, and changes nothing of where it points.
    const url = `${target}#${crypto.randomUUID()}`;
    const response = await tool(account.key, path, { url });
    expect(response.status).toBe(400);
    const { error } = await json(response);
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.details).toEqual([{ field: 'url', location: 'body', message: expect.stringContaining('Only public http(s) addresses are fetched') }]);
    expect(await lastReceivedBy(`/v2${path}`, url)).toBeUndefined();
    await expectReleasedUncharged(account.organizationId, 10);
  });
});
