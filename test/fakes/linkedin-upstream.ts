import company from '../fixtures/linkedin-data-api/get-company-by-domain.json' with { type: 'json' };

export const FAKE_LINKEDIN = { key: 'fake-rapidapi-key', host: 'linkedin-data-api.p.rapidapi.com', baseUrl: 'https://linkedin.fake' } as const;

/**
 * A fake of the RapidAPI professional-network vendor, speaking its wire format. The `domain` asked
 * for chooses the outcome, so each test can provoke one class of upstream answer.
 */
let served = 0;
const flakyCalls = new Map<string, number>();

export async function linkedinUpstream(request: Request): Promise<Response> {
  const url = new URL(request.url);
  // RapidAPI's gateway checks the key before the vendor sees the path.
  if (request.headers.get('x-rapidapi-key') !== FAKE_LINKEDIN.key || request.headers.get('x-rapidapi-host') !== FAKE_LINKEDIN.host) {
    return Response.json({ message: 'You are not subscribed to this API.' }, { status: 403 });
  }
  if (url.pathname !== '/get-company-by-domain') return Response.json({ message: 'Endpoint does not exist' }, { status: 404 });
  const domain = url.searchParams.get('domain') ?? '';
  const outcome = domain.split('.')[0];
  switch (outcome) {
    case 'rejected':
      return Response.json({ success: false, message: 'Company not found for this domain', data: null });
    case 'status404':
      return Response.json({ message: 'Not found' }, { status: 404 });
    case 'status400':
      return Response.json({ message: 'Invalid domain' }, { status: 400 });
    case 'status500':
      return new Response('upstream exploded', { status: 500 });
    case 'status503':
      return new Response('unavailable', { status: 503 });
    case 'status402':
      return Response.json({ message: 'Payment required' }, { status: 402 });
    case 'quota':
      return Response.json({ message: 'You have exceeded the MONTHLY quota for Requests on your current plan, BASIC.' }, { status: 429 });
    case 'throttled':
      return Response.json({ message: 'Too many requests' }, { status: 429, headers: { 'retry-after': '7' } });
    case 'throttledhuge':
      return Response.json({ message: 'Too many requests' }, { status: 429, headers: { 'retry-after': '99999999999999999999999' } });
    case 'throttledbare':
      return Response.json({ message: 'Too many requests' }, { status: 429 });
    case 'throttleddate':
      return Response.json({ message: 'Too many requests' }, { status: 429, headers: { 'retry-after': new Date(Date.now() + 20_000).toUTCString() } });
    case 'nomessage':
      // The vendor's success without its `message` field.
      return Response.json({ success: true, data: { ...company.data, website: `https://${domain}` } });
    case 'forbidden':
      return Response.json({ message: 'Invalid API key' }, { status: 403 });
    case 'notjson':
      return new Response('<html>gateway</html>', { status: 200, headers: { 'content-type': 'text/html' } });
    case 'counter':
      // Every answer differs, so a test can tell a cached answer from a fresh one.
      served += 1;
      return Response.json({ ...company, data: { ...company.data, followerCount: served } });
    case 'flaky': {
      // The first call for each flaky domain fails; later ones succeed.
      const calls = (flakyCalls.get(domain) ?? 0) + 1;
      flakyCalls.set(domain, calls);
      return calls === 1 ? new Response('flaked', { status: 500 }) : Response.json(company);
    }
    case 'slow':
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      return Response.json(company);
    case 'hang':
      // Never answers: the call ends only when its caller goes away.
      return new Promise<Response>((_, reject) => request.signal.addEventListener('abort', () => reject(new Error('aborted'))));
    default:
      return Response.json({ ...company, data: { ...company.data, website: `https://${domain}` } });
  }
}
