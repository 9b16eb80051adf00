import { z } from '@hono/zod-openapi';
import { unitsFromCents } from '../core/money';
import { hunter, peopleDataLabs, theCompaniesApi } from '../providers/lead-apis';
import { leadAnswers } from './leads.examples';
import { count, domain, HOUR, platformUrl, query } from './social/fields';
import type { Price } from '../core/operation';
import { row, vendorOperations } from './vendor-operations';

/**
 * Lead data. People and company emails: Hunter (api.hunter.io/v2). Profiles, mobile numbers and structured
 * people and company search, firmographics and funding: People Data Labs (api.peopledatalabs.com/v5).
 * Competitors (look-alike companies): The Companies API (api.thecompaniesapi.com/v2).
 */

const email = z.email('An email address.').max(254).openapi({ example: 'patrick@stripe.com' });
const name = (example: string) => z.string().trim().min(1).max(100).openapi({ example });
const linkedinProfile = platformUrl(['linkedin.com'], 'https://www.linkedin.com/in/seanthorne');
const DAY = 24 * HOUR;

/** Hunter's answer as it sends it: the record in `data`, the request echoed and the totals in `meta`. */
const hunterAnswer = (data: z.ZodType) => z.looseObject({ data, meta: z.looseObject({}).optional() });

/** Either an Elasticsearch query object or an SQL text, as People Data Labs' search takes them. */
const searchInput = (example: string) =>
  z
    .strictObject({
      sql: z.string().min(1).max(8000).optional().openapi({ example }),
      query: z.record(z.string(), z.unknown()).optional().openapi({ description: 'An Elasticsearch query object over the vendor\'s fields.' }),
      size: count(1, 100, 10),
      scroll_token: z.string().min(1).max(2048).optional().openapi({ description: 'The `scroll_token` of the previous page, as given.' }),
    })
    .refine((input) => (input.sql === undefined) !== (input.query === undefined), { message: 'Give exactly one of sql and query.', path: ['sql'] });

/** People Data Labs bills each record a search returns: quoted on `size`, charged on `data.length`. */
function perRecord(cents: number): Price<{ size: number }> {
  const record = unitsFromCents(cents);
  return {
    display: { cents, per: 'row', note: 'per record returned; quoted on size' },
    quote: (input) => record * input.size,
    settle: (input, result) => {
      const records = (result.data as { data?: unknown[] } | null)?.data;
      return record * Math.min(Array.isArray(records) ? records.length : 0, input.size);
    },
  };
}

const people = vendorOperations({ platform: 'leads', vendor: hunter, timeoutMs: 30_000, freshnessMs: DAY }, [
  row({
    name: 'email-find',
    summary: 'Find a person\'s work email',
    description: 'The most likely work email of a person at a company (by domain or company name), with a confidence score and its sources.',
    input: z
      .strictObject({
        domain: domain.optional(),
        company: name('Stripe').optional(),
        first_name: name('Patrick').optional(),
        last_name: name('Collison').optional(),
        full_name: name('Patrick Collison').optional(),
      })
      .refine((input) => input.domain !== undefined || input.company !== undefined, { message: 'Give domain or company.', path: ['domain'] })
      .refine((input) => input.full_name !== undefined || (input.first_name !== undefined && input.last_name !== undefined), {
        message: 'Give full_name, or first_name and last_name.',
        path: ['full_name'],
      }),
    example: { domain: 'stripe.com', first_name: 'Patrick', last_name: 'Collison' },
    answerExample: leadAnswers['email-find'],
    output: hunterAnswer(z.looseObject({ email: z.string().nullable(), score: z.number().nullable() })),
    endpoint: { path: 'v2/email-finder' },
    price: 10,
  }),
  row({
    name: 'email-verify',
    summary: 'Verify an email address',
    description: 'Whether an address is deliverable: status (valid, invalid, accept_all, webmail, disposable, unknown), score, MX and SMTP checks.',
    input: z.strictObject({ email }),
    example: { email: 'patrick@stripe.com' },
    answerExample: leadAnswers['email-verify'],
    output: hunterAnswer(z.looseObject({ email: z.string(), status: z.string(), score: z.number().nullable() })),
    endpoint: { path: 'v2/email-verifier' },
    price: 5,
    timeoutMs: 60_000,
  }),
  row({
    name: 'email-enrich',
    summary: 'Person behind an email',
    description: 'The person an email address belongs to: name, location, employment (company, title, seniority) and social handles.',
    input: z.strictObject({ email }),
    example: { email: 'patrick@stripe.com' },
    answerExample: leadAnswers['email-enrich'],
    output: hunterAnswer(z.looseObject({ email: z.string(), name: z.looseObject({ fullName: z.string().nullable() }) })),
    endpoint: { path: 'v2/people/find' },
    price: 10,
  }),
  row({
    name: 'company-emails',
    summary: 'Email addresses at a domain',
    description: 'Email addresses found for a domain, with names, positions, departments, confidence and sources, and the domain\'s pattern.',
    input: z.strictObject({
      domain,
      limit: count(1, 100, 10),
      offset: z.coerce.number().int().min(0).max(10_000).optional().openapi({ example: 10 }),
      type: z.enum(['personal', 'generic']).optional().openapi({ example: 'personal' }),
      seniority: z.enum(['junior', 'senior', 'executive']).optional().openapi({ example: 'executive' }),
      department: z.enum(['executive', 'it', 'finance', 'management', 'sales', 'legal', 'support', 'hr', 'marketing', 'communication', 'education', 'design', 'health', 'operations']).optional().openapi({ example: 'executive' }),
    }),
    example: { domain: 'stripe.com' },
    answerExample: leadAnswers['company-emails'],
    output: hunterAnswer(z.looseObject({ domain: z.string(), pattern: z.string().nullable(), emails: z.array(z.looseObject({ value: z.string() })) })),
    endpoint: { path: 'v2/domain-search' },
    price: 10,
  }),
  row({
    name: 'company-discovery',
    summary: 'Discover companies',
    description: 'Companies matching a description in words and/or filters (headquarters country, industry, headcount), with their domains and email counts.',
    method: 'POST',
    input: z
      .strictObject({
        query: query(500, 'Fintech companies in Europe with 50 to 200 employees').optional(),
        headquarters_location: z.strictObject({ include: z.array(z.strictObject({ country: z.string().regex(/^[A-Z]{2}$/, 'ISO country code.') })).min(1).max(20) }).optional(),
        industry: z.strictObject({ include: z.array(z.string().min(1).max(100)).min(1).max(20) }).optional(),
        headcount: z.array(z.enum(['1-10', '11-50', '51-200', '201-500', '501-1000', '1001-5000', '5001-10000', '10001+'])).min(1).optional(),
        limit: count(1, 100, 20),
        offset: z.coerce.number().int().min(0).max(10_000).optional(),
      })
      .refine((input) => input.query !== undefined || input.headquarters_location !== undefined || input.industry !== undefined || input.headcount !== undefined, {
        message: 'Give a query or at least one filter.',
        path: ['query'],
      }),
    example: { query: 'Fintech companies in Europe with 50 to 200 employees' },
    answerExample: leadAnswers['company-discovery'],
    output: hunterAnswer(z.array(z.looseObject({ domain: z.string(), organization: z.string().nullable() }))),
    endpoint: { method: 'POST', path: 'v2/discover' },
    price: 1,
  }),
  row({
    name: 'company-technologies',
    summary: 'Technologies a company uses',
    description: 'Technographics of a domain: the technologies (`tech`) and their categories, with the company\'s firmographic record.',
    input: z.strictObject({ domain }),
    example: { domain: 'stripe.com' },
    answerExample: leadAnswers['company-technologies'],
    output: hunterAnswer(z.looseObject({ domain: z.string(), tech: z.array(z.string()) })),
    endpoint: { path: 'v2/companies/find' },
    price: 5,
  }),
]);

const profiles = vendorOperations({ platform: 'leads', vendor: peopleDataLabs, timeoutMs: 30_000, freshnessMs: DAY }, [
  row({
    name: 'profile-enrich',
    summary: 'Enrich a person profile',
    description: 'The full person record for a profile URL or email: experience, education, skills, location, contact fields the vendor holds.',
    input: z
      .strictObject({ profile: linkedinProfile.optional(), email: email.optional(), min_likelihood: z.coerce.number().int().min(1).max(10).optional().openapi({ example: 6 }) })
      .refine((input) => input.profile !== undefined || input.email !== undefined, { message: 'Give profile or email.', path: ['profile'] }),
    example: { profile: 'https://www.linkedin.com/in/seanthorne' },
    answerExample: leadAnswers['profile-enrich'],
    output: z.looseObject({ likelihood: z.number(), data: z.looseObject({ full_name: z.string() }) }),
    endpoint: { path: 'v5/person/enrich' },
    price: 30,
  }),
  row({
    name: 'mobile-lookup',
    summary: "A person's mobile number",
    description: 'The mobile number on record for a profile URL or email; answers 404 PROVIDER_ERROR, uncharged, when none is known.',
    input: z
      .strictObject({ profile: linkedinProfile.optional(), email: email.optional() })
      .refine((input) => input.profile !== undefined || input.email !== undefined, { message: 'Give profile or email.', path: ['profile'] }),
    example: { profile: 'https://www.linkedin.com/in/seanthorne' },
    answerExample: leadAnswers['mobile-lookup'],
    output: z.looseObject({ data: z.looseObject({ mobile_phone: z.string() }) }),
    // The vendor matches only records holding a mobile number, so a record without one is not billed.
    endpoint: { path: 'v5/person/enrich', fixed: { required: 'mobile_phone' } },
    price: 40,
  }),
  row({
    name: 'people-search',
    summary: 'Structured people search',
    description: 'People matching an SQL or Elasticsearch query over titles, companies, locations, skills and seniority, up to 100 a page.',
    method: 'POST',
    input: searchInput("SELECT * FROM person WHERE job_company_website='stripe.com' AND job_title_levels='vp'"),
    example: { sql: "SELECT * FROM person WHERE job_company_website='stripe.com' AND job_title_levels='vp'", size: 2 },
    answerExample: leadAnswers['people-search'],
    output: z.looseObject({ data: z.array(z.looseObject({ full_name: z.string() })), total: z.number() }),
    endpoint: { method: 'POST', path: 'v5/person/search' },
    price: perRecord(30),
  }),
  row({
    name: 'company-enrich',
    summary: 'Firmographic enrichment',
    description: 'The company record for a website, name or profile URL: industry, size, headcount, founding year, location, tags, funding.',
    input: z
      .strictObject({ website: domain.optional(), name: name('Stripe').optional(), profile: platformUrl(['linkedin.com'], 'https://www.linkedin.com/company/stripe').optional() })
      .refine((input) => input.website !== undefined || input.name !== undefined || input.profile !== undefined, { message: 'Give website, name or profile.', path: ['website'] }),
    example: { website: 'stripe.com' },
    answerExample: leadAnswers['company-enrich'],
    output: z.looseObject({ name: z.string(), website: z.string().nullable(), employee_count: z.number().nullable() }),
    endpoint: { path: 'v5/company/enrich' },
    price: 15,
  }),
  row({
    name: 'company-search',
    summary: 'Structured company search',
    description: 'Companies matching an SQL or Elasticsearch query over industry, size, location, founding year and tags, up to 100 a page.',
    method: 'POST',
    input: searchInput("SELECT * FROM company WHERE industry='financial services' AND size='201-500' AND location_country='germany'"),
    example: { sql: "SELECT * FROM company WHERE industry='financial services' AND size='201-500' AND location_country='germany'", size: 2 },
    answerExample: leadAnswers['company-search'],
    output: z.looseObject({ data: z.array(z.looseObject({ name: z.string() })), total: z.number() }),
    endpoint: { method: 'POST', path: 'v5/company/search' },
    price: perRecord(15),
  }),
  row({
    name: 'company-funding',
    summary: "A company's funding",
    description: 'Funding intelligence for a website: total raised, rounds, latest stage and date, from the firmographic record.',
    input: z.strictObject({ website: domain }),
    example: { website: 'stripe.com' },
    answerExample: leadAnswers['company-funding'],
    output: z.looseObject({ name: z.string(), total_funding_raised: z.number().nullable(), latest_funding_stage: z.string().nullable() }),
    endpoint: { path: 'v5/company/enrich' },
    price: 15,
  }),
]);

const competitors = vendorOperations({ platform: 'leads', vendor: theCompaniesApi, timeoutMs: 30_000, freshnessMs: DAY }, [
  row({
    name: 'company-competitors',
    summary: "A company's competitors",
    description: 'Companies most like a domain (industry, size, market, technologies), best match first, each with its similarity score in `meta.score`.',
    input: z.strictObject({ domain, size: count(1, 100, 10) }),
    example: { domain: 'stripe.com' },
    answerExample: leadAnswers['company-competitors'],
    output: z.looseObject({ companies: z.array(z.looseObject({ about: z.looseObject({ name: z.string() }), meta: z.looseObject({ score: z.number() }).optional() })) }),
    endpoint: { path: 'v2/companies/similar', rename: { domain: 'domains[]' }, fixed: { sortKey: 'meta.score', sortOrder: 'desc' } },
    price: 5,
  }),
]);

export const leadOperations = [...people, ...profiles, ...competitors];
