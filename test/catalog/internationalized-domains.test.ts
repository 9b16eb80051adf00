import { describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../src/operations';
import { companyByDomain, funded } from '../support/api';

/** bücher.de and бюро.рф in the ASCII form DNS and the vendors use: every label, the top-level domain too. */
const INTERNATIONALIZED = ['xn--bcher-kva.de', 'xn--90aefi9a.xn--p1ai'];

const operation = (id: string) => OPERATIONS.find((entry) => `${entry.platform}/${entry.name}` === id)!;

describe('an internationalized domain in its xn-- form', () => {
  it('is looked up like any other domain (the company record)', async () => {
    const account = await funded(10, 'payg');
    for (const domain of INTERNATIONALIZED) expect((await companyByDomain(account.key, domain)).status).toBe(200);
  });

  // What each pattern is for still holds: no path on a bare domain, no one-letter top-level domain, no empty label.
  const bare = ['example.com/path', 'example.c', 'xn--.'];
  it.each([
    ['linkedin/get-company-by-domain', (domain: string) => ({ domain }), bare],
    ['seo/competitors', (domain: string) => ({ target: domain }), bare],
    ['seo/ranked-keywords', (domain: string) => ({ target: domain }), ['example.c', 'xn--.']],
    ['seo/ranked-keywords', (domain: string) => ({ target: `https://${domain}/page` }), ['example.c', 'xn--.']],
  ])('is a valid input of %s', (id, input, wrongs) => {
    for (const domain of INTERNATIONALIZED) expect(operation(id).input.safeParse(input(domain)).success, domain).toBe(true);
    for (const wrong of wrongs) expect(operation(id).input.safeParse(input(wrong)).success, wrong).toBe(false);
  });
});
