/**
 * A stand-in for the few Stripe endpoints the dashboard uses, in Stripe's wire format: POST
 * /v1/checkout/sessions takes a form-encoded body (bracketed keys, as the `stripe` package sends them) and
 * answers a Checkout Session object; a wrong key gets Stripe's 401 error object. The sessions it made can
 * be read back at GET /test/sessions so a test in workerd can check what was asked. DELETE /v1/subscriptions/:id
 * cancels a subscription a test made with POST /test/subscriptions {id} (Stripe answers the subscription, its
 * status `canceled`; an id it does not have is a 404 `resource_missing`), and GET /test/subscriptions reads them.
 */
export const FAKE_STRIPE = { secretKey: 'sk_test_fake', webhookSecret: 'whsec_fake_secret', baseUrl: 'https://stripe.fake' };

const sessions: Record<string, unknown>[] = [];
const subscriptions = new Map<string, { id: string; object: 'subscription'; status: 'active' | 'canceled'; canceled_at: number | null }>();

export async function stripeUpstream(request: Request): Promise<Response> {
  const url = new URL(request.url);
  if (request.method === 'GET' && url.pathname === '/test/sessions') return Response.json(sessions);
  if (url.pathname === '/test/subscriptions') {
    if (request.method === 'GET') return Response.json([...subscriptions.values()]);
    const { id } = (await request.json()) as { id: string };
    subscriptions.set(id, { id, object: 'subscription', status: 'active', canceled_at: null });
    return Response.json(subscriptions.get(id));
  }
  if (request.headers.get('authorization') !== `Bearer ${FAKE_STRIPE.secretKey}`) {
    return Response.json({ error: { type: 'invalid_request_error', message: 'Invalid API Key provided.' } }, { status: 401 });
  }
  const cancelled = request.method === 'DELETE' ? /^\/v1\/subscriptions\/([^/]+)$/.exec(url.pathname) : null;
  if (cancelled) {
    const subscription = subscriptions.get(decodeURIComponent(cancelled[1]!));
    if (!subscription) {
      return Response.json(
        { error: { type: 'invalid_request_error', code: 'resource_missing', param: 'id', message: `No such subscription: '${cancelled[1]}'` } },
        { status: 404 },
      );
    }
    subscription.status = 'canceled';
    subscription.canceled_at ??= Math.floor(Date.now() / 1000);
    return Response.json(subscription);
  }
  if (request.method !== 'POST' || url.pathname !== '/v1/checkout/sessions') {
    return Response.json({ error: { type: 'invalid_request_error', message: `Unrecognized request URL (${request.method}: ${url.pathname}).` } }, { status: 404 });
  }
  const form = new URLSearchParams(await request.text());
  const field = (name: string) => form.get(name);
  const metadata = Object.fromEntries([...form].filter(([key]) => key.startsWith('metadata[')).map(([key, value]) => [key.slice(9, -1), value]));
  const id = `cs_test_${crypto.randomUUID().replaceAll('-', '')}`;
  const session = {
    id,
    object: 'checkout.session',
    mode: field('mode'),
    client_reference_id: field('client_reference_id'),
    customer_email: field('customer_email'),
    metadata,
    amount_total: Number(field('line_items[0][price_data][unit_amount]')),
    currency: field('line_items[0][price_data][currency]'),
    recurring_interval: field('line_items[0][price_data][recurring][interval]'),
    success_url: field('success_url'),
    cancel_url: field('cancel_url'),
    payment_status: 'unpaid',
    status: 'open',
    url: `https://checkout.stripe.com/c/pay/${id}`,
  };
  sessions.push(session);
  return Response.json(session);
}
