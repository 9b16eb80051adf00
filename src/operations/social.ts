import { z } from '@hono/zod-openapi';
import { unitsFromCents } from '../core/money';
import { rapidApiGet, type RapidApiVendor } from '../providers/rapidapi';
import type { Operation } from './types';

const linkedinVendor: RapidApiVendor = {
  label: 'The LinkedIn data provider',
  keySetting: 'LINKEDIN_API_KEY',
  hostSetting: 'LINKEDIN_API_HOST',
  baseUrlSetting: 'LINKEDIN_BASE_URL',
};

const Image = z.object({ url: z.string(), width: z.number().int(), height: z.number().int() });
const Address = { geographicArea: z.string(), country: z.string(), city: z.string(), postalCode: z.string(), line1: z.string() };

/** Spec "Company record". Upstream fields beyond these pass through untouched (the answer is not re-validated). */
export const CompanyRecord = z
  .object({
    id: z.string(),
    name: z.string(),
    universalName: z.string(),
    linkedinUrl: z.string(),
    tagline: z.string(),
    description: z.string(),
    type: z.string(),
    phone: z.string(),
    Images: z.object({ logo: z.string(), cover: z.string() }).partial(),
    backgroundCoverImages: z.array(Image),
    logos: z.array(Image),
    staffCount: z.number().int(),
    headquarter: z.object(Address).partial(),
    locations: z.array(z.object({ ...Address, postalCode: Address.postalCode.optional(), headquarter: z.boolean().optional() }).partial()),
    industries: z.array(z.string()),
    specialities: z.array(z.string()),
    website: z.string(),
    founded: z.string().nullable().openapi({ description: 'Null-typed upstream: null so far.' }),
    callToAction: z
      .object({
        callToActionType: z.string(),
        visible: z.boolean(),
        callToActionMessage: z.object({ textDirection: z.string(), text: z.string() }).partial(),
        url: z.string(),
      })
      .partial(),
    followerCount: z.number().int(),
    staffCountRange: z.string(),
    crunchbaseUrl: z.string(),
    fundingData: z
      .object({
        updatedAt: z.string(),
        updatedDate: z.string(),
        numFundingRounds: z.number().int(),
        lastFundingRound: z
          .object({
            investorsUrl: z.string(),
            leadInvestors: z.string().nullable().openapi({ description: 'Null-typed upstream: null so far.' }),
            fundingRoundUrl: z.string(),
            fundingType: z.string(),
            moneyRaised: z.object({ currencyCode: z.string(), amount: z.string() }).partial(),
            numOtherInvestors: z.number().int(),
            announcedOn: z.object({ month: z.number().int(), day: z.number().int(), year: z.number().int() }).partial(),
          })
          .partial(),
      })
      .partial(),
  })
  .partial()
  .openapi('CompanyRecord', { description: 'Image URLs carry signed, expiring query parameters; treat them as opaque.' });

const domain = z
  .string()
  .trim()
  .min(1)
  .max(253)
  .regex(/^(?!https?:\/\/)[A-Za-z0-9.-]+\.[A-Za-z]{2,}$/, 'Expected a bare domain such as example.com, without protocol or path.')
  .openapi({ example: 'stripe.com' });

const getCompanyByDomain: Operation = {
  platform: 'linkedin',
  name: 'get-company-by-domain',
  method: 'GET',
  paths: ['/v1/data/linkedin/get-company-by-domain'],
  summary: 'Company record by website domain',
  description: 'Professional-network company enrichment by domain: profile, size, locations, industries and funding.',
  input: z.strictObject({ domain }),
  output: CompanyRecord,
  price: {
    display: { cents: 1, per: 'request' },
    quote: () => unitsFromCents(1),
    settle: () => unitsFromCents(1),
  },
  keepsMessage: true,
  call: rapidApiGet(linkedinVendor, 'get-company-by-domain'),
  timeoutMs: 30_000,
  // Company records change slowly; an hour-old answer is as good as a fresh one.
  freshnessMs: 60 * 60 * 1000,
};

export const socialOperations: Operation[] = [getCompanyByDomain];
