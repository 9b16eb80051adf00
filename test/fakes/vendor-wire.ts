/**
 * The social and lead vendors as the fakes speak them, shared by the fake server (Node) and the tests
 * (workerd): where each vendor is reached, how it checks our key, and how it says each kind of failure in
 * its own wire format. Everything here is plain data and `Response` builders, so both runtimes load it.
 */

/** The fake's origin; a vendor lives under `/<vendor id>`, a provoked failure under `/<vendor id>/~<class>`. */
export const FAKE_VENDORS_ORIGIN = 'https://vendors.fake';

/** Each failure class the spec normalizes, and what the caller must see: all billed zero. */
export const FAILURE_CLASSES = {
  rejected: { status: 422, code: 'PROVIDER_ERROR', what: 'a 200 whose body says the lookup failed' },
  'caller-error': { status: 404, code: 'PROVIDER_ERROR', what: 'the vendor refusing the request with its own 4xx' },
  'vendor-error': { status: 502, code: 'PROVIDER_ERROR', what: 'a vendor 5xx' },
  quota: { status: 503, code: 'UPSTREAM_CREDITS_EXHAUSTED', what: 'our quota with the vendor spent' },
  'key-refused': { status: 502, code: 'PROVIDER_ERROR', what: 'our key refused' },
  'not-json': { status: 502, code: 'PROVIDER_ERROR', what: 'a 200 that is not JSON' },
  network: { status: 502, code: 'PROVIDER_ERROR', what: 'a dropped connection' },
} as const;
export type FailureClass = keyof typeof FAILURE_CLASSES;

interface VendorFake {
  settings: Record<string, string>;
  authorized(request: Request, url: URL): boolean;
  /** The vendor's way of saying it failed in a 200; absent for vendors that never do (Google). */
  rejected?: () => Response;
  callerError(): Response;
  quota(): Response;
  keyRefused(): Response;
}

const json = (body: unknown, status = 200) => Response.json(body, { status });

/** RapidAPI's own gateway answers quota and key problems the same way for every vendor behind it. */
function rapidApi(id: string, prefix: string, host: string, failures: { rejected?: unknown; notFound: unknown }): VendorFake {
  const key = `fake-${id}-key`;
  return {
    settings: { [`${prefix}_API_KEY`]: key, [`${prefix}_API_HOST`]: host, [`${prefix}_BASE_URL`]: `${FAKE_VENDORS_ORIGIN}/${id}` },
    authorized: (request) => request.headers.get('x-rapidapi-key') === key && request.headers.get('x-rapidapi-host') === host,
    ...(failures.rejected !== undefined ? { rejected: () => json(failures.rejected) } : {}),
    callerError: () => json(failures.notFound, 404),
    quota: () => json({ message: 'You have exceeded the MONTHLY quota for Requests on your current plan, BASIC. Upgrade your plan at https://rapidapi.com' }, 429),
    keyRefused: () => json({ message: 'You are not subscribed to this API.' }, 403),
  };
}

const googleError = (code: number, reason: string, message: string) =>
  json({ error: { code, message, errors: [{ message, domain: 'youtube.quota', reason }] } }, code);

export const VENDOR_FAKES: Record<string, VendorFake> = {
  'linkedin-data-api': rapidApi('linkedin-data-api', 'LINKEDIN', 'linkedin-data-api.p.rapidapi.com', {
    rejected: { success: false, message: 'Profile not found', data: null },
    notFound: { message: 'Not found' },
  }),
  'tiktok-scraper7': rapidApi('tiktok-scraper7', 'TIKTOK', 'tiktok-scraper7.p.rapidapi.com', {
    rejected: { code: -1, msg: 'Url parsing is failed! Please check url.', processed_time: 0.0213 },
    notFound: { message: "Endpoint '/user/none' does not exist" },
  }),
  'twitter-api45': rapidApi('twitter-api45', 'X', 'twitter-api45.p.rapidapi.com', {
    rejected: { status: 'error', message: 'User not found' },
    notFound: { message: 'Not found' },
  }),
  // No 200 failure body: its documented schema shows none (a 200 without a translation is read as one).
  twitter283: rapidApi('twitter283', 'TWITTER283', 'twitter283.p.rapidapi.com', { notFound: { message: 'Not found' } }),
  'instagram-looter2': rapidApi('instagram-looter2', 'INSTAGRAM', 'instagram-looter2.p.rapidapi.com', {
    rejected: { status: false, errorMessage: 'User not found or account is private' },
    notFound: { message: 'Not found' },
  }),
  'facebook-scraper3': rapidApi('facebook-scraper3', 'FACEBOOK', 'facebook-scraper3.p.rapidapi.com', {
    rejected: { error: 'Page not found' },
    notFound: { message: 'Not found' },
  }),
  'yt-api': rapidApi('yt-api', 'YTAPI', 'yt-api.p.rapidapi.com', {
    rejected: { status: 'fail', message: 'This video is unavailable' },
    notFound: { message: 'Not found' },
  }),
  'youtube-data-api': {
    settings: { YOUTUBE_API_KEY: 'fake-google-key', YOUTUBE_BASE_URL: `${FAKE_VENDORS_ORIGIN}/youtube-data-api` },
    authorized: (_, url) => url.searchParams.get('key') === 'fake-google-key',
    callerError: () => googleError(404, 'videoNotFound', 'The video identified by the <code>videoId</code> parameter could not be found.'),
    quota: () => googleError(403, 'quotaExceeded', 'The request cannot be completed because you have exceeded your <a href="/youtube/v3/getting-started#quota">quota</a>.'),
    keyRefused: () => googleError(400, 'keyInvalid', 'API key not valid. Please pass a valid API key.'),
  },
  hunter: {
    settings: { HUNTER_API_KEY: 'fake-hunter-key', HUNTER_BASE_URL: `${FAKE_VENDORS_ORIGIN}/hunter` },
    authorized: (_, url) => url.searchParams.get('api_key') === 'fake-hunter-key',
    rejected: () => json({ errors: [{ id: 'wrong_params', code: 400, details: 'You are missing the domain parameter' }] }),
    callerError: () => json({ errors: [{ id: 'not_found', code: 404, details: 'No person was found for this email' }] }, 404),
    quota: () => json({ errors: [{ id: 'too_many_requests', code: 429, details: "You've reached your usage limit for this month. Upgrade your plan." }] }, 429),
    keyRefused: () => json({ errors: [{ id: 'authentication_failed', code: 401, details: 'No user found for the API key supplied' }] }, 401),
  },
  peopledatalabs: {
    settings: { PEOPLEDATALABS_API_KEY: 'fake-pdl-key', PEOPLEDATALABS_BASE_URL: `${FAKE_VENDORS_ORIGIN}/peopledatalabs` },
    authorized: (request) => request.headers.get('x-api-key') === 'fake-pdl-key',
    rejected: () => json({ status: 400, error: { type: 'invalid_request_error', message: 'Request object must contain at least one field' } }),
    callerError: () => json({ status: 404, error: { type: 'not_found', message: 'No records were found matching your request' } }, 404),
    quota: () => json({ status: 402, error: { type: 'payment_required', message: 'You have hit your account maximum for person enrichment (all matches used)' } }, 402),
    keyRefused: () => json({ status: 401, error: { type: 'authentication_error', message: 'Invalid API key' } }, 401),
  },
  xai: {
    settings: { XAI_API_KEY: 'fake-xai-key', XAI_BASE_URL: `${FAKE_VENDORS_ORIGIN}/xai` },
    authorized: (request) => request.headers.get('authorization') === 'Bearer fake-xai-key',
    // A response object whose status is not `completed` (docs.x.ai: `completed`, `in_progress` or `incomplete`).
    rejected: () => json({ id: 'resp-incomplete', object: 'response', status: 'incomplete', output: [], incomplete_details: { reason: 'max_output_tokens' } }),
    callerError: () => json({ code: 'Some requested entity was not found', error: 'The model grok-4.7 does not exist or your team does not have access to it.' }, 404),
    quota: () => json({ code: 'Some resource has been exhausted', error: 'Your team has either used all available credits or reached its monthly spending limit. To continue making API requests, please purchase more credits or raise your spending limit.' }, 429),
    keyRefused: () => json({ code: 'Client specified an invalid argument', error: 'Incorrect API key provided. You can obtain an API key from https://console.x.ai.' }, 400),
  },
  thecompaniesapi: {
    settings: { THECOMPANIESAPI_API_KEY: 'fake-companies-key', THECOMPANIESAPI_BASE_URL: `${FAKE_VENDORS_ORIGIN}/thecompaniesapi` },
    authorized: (request) => request.headers.get('authorization') === 'Basic fake-companies-key',
    // Its OpenAPI document (api.thecompaniesapi.com/v2/openapi): an error is `{messages: <code>, status, details?}`.
    callerError: () => json({ messages: 'companyNotFound', status: 404 }, 404),
    quota: () => json({ messages: 'noCreditsRemaining', status: 402 }, 402),
    keyRefused: () => json({ messages: 'tokenNotFound', status: 401 }, 401),
  },
};

/** The fixture of a vendor path: `user/info` → `user-info.json`, the root → `index.json`. */
export function fixtureName(path: string): string {
  const trimmed = path.replace(/^\/+|\/+$/g, '');
  return `${trimmed === '' ? 'index' : trimmed.replaceAll('/', '-')}.json`;
}
