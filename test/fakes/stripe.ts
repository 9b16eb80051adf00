/**
 * A stand-in for the few Stripe endpoints the dashboard uses, in Stripe's wire format: POST
 * /v1/checkout/sessions takes a form-encoded body (bracketed keys, as the `stripe` package sends them) and
 * answers a Checkout Session object; a wrong key gets Stripe's 401 error object. The sessions it made can
 * be read back at GET /test/sessions so a test in workerd can check what was asked. Subscriptions a test made with
 * POST /test/subscriptions {id, customer?, status?} (active unless said; making one again replaces it) are read (GET /v1/subscriptions/:id), set to end at their period's end or
 * renew (POST with cancel_at_period_end, which sets cancel_at, or cancel_at itself, '' unsetting it), and cancelled at
 * once (DELETE, its `prorate` and `invoice_now` kept for the test; a second cancel is Stripe's 400); an id it does
 * not have is a 404 `resource_missing`. GET /test/subscriptions reads them. POST /v1/refunds {payment_intent} refunds
 * once per Idempotency-Key (a key sent again answers the same refund, as Stripe does); GET /test/refunds reads them.
 * Payments a test made with POST /test/payment_intents {id, amount, amount_refunded?} are read at GET
 * /v1/payment_intents/:id, their charge expanded as `latest_charge` when asked; a refund sets the whole amount refunded.
 * Invoices a test made with POST /test/invoices {id, payment_intent, amount} list their payment at GET
 * /v1/invoice_payments?invoice=…
 */
export const FAKE_STRIPE = { secretKey: 'sk_test_fake', webhookSecret: 'whsec_fake_secret', baseUrl: 'https://stripe.fake' };

const sessions: Record<string, unknown>[] = [];
interface FakeSubscription {
  id: string;
  object: 'subscription';
  customer: string;
  status: 'active' | 'canceled' | 'unpaid' | 'past_due';
  cancel_at_period_end: boolean;
  cancel_at: number | null;
  canceled_at: number | null;
  /** Not Stripe's: how the test's cancellation asked (its `prorate`), for the test to read. */
  cancelled_with?: { prorate: boolean; invoice_now: boolean };
}
const subscriptions = new Map<string, FakeSubscription>();
const refunds = new Map<string, { id: string; object: 'refund'; payment_intent: string; reason: string | null; status: 'succeeded'; metadata: Record<string, string> }>();
/** Payments a test made (POST /test/payment_intents {id, amount, amount_refunded?}), each with its one charge. */
const paymentIntents = new Map<string, { id: string; amount: number; amount_refunded: number }>();
/** Invoices a test made (POST /test/invoices {id, payment_intent, amount}), each paid by that payment. */
const invoices = new Map<string, { id: string; payment_intent: string; amount: number }>();
/** A month from when the test made the subscription: when its period ends. */
const periodEnds = new Map<string, number>();

export async function stripeUpstream(request: Request): Promise<Response> {
  const url = new URL(request.url);
  if (request.method === 'GET' && url.pathname === '/test/sessions') return Response.json(sessions);
  if (request.method === 'GET' && url.pathname === '/test/refunds') return Response.json([...refunds.values()]);
  if (url.pathname === '/test/subscriptions') {
    if (request.method === 'GET') return Response.json([...subscriptions.values()]);
    const { id, customer = `cus_${crypto.randomUUID().replaceAll('-', '').slice(0, 14)}`, status = 'active' } = (await request.json()) as { id: string; customer?: string; status?: FakeSubscription['status'] };
    subscriptions.set(id, { id, object: 'subscription', customer, status, cancel_at_period_end: false, cancel_at: null, canceled_at: null });
    periodEnds.set(id, Math.floor(Date.now() / 1000) + 30 * 24 * 3600);
    return Response.json(subscriptions.get(id));
  }
  if (url.pathname === '/test/invoices' && request.method === 'POST') {
    const invoice = (await request.json()) as { id: string; payment_intent: string; amount: number };
    invoices.set(invoice.id, invoice);
    paymentIntents.set(invoice.payment_intent, { id: invoice.payment_intent, amount: invoice.amount, amount_refunded: 0 });
    return Response.json(invoice);
  }
  if (url.pathname === '/test/payment_intents' && request.method === 'POST') {
    const { id, amount, amount_refunded = 0 } = (await request.json()) as { id: string; amount: number; amount_refunded?: number };
    paymentIntents.set(id, { id, amount, amount_refunded });
    return Response.json(paymentIntents.get(id));
  }
  if (request.headers.get('authorization') !== `Bearer ${FAKE_STRIPE.secretKey}`) {
    return Response.json({ error: { type: 'invalid_request_error', message: 'Invalid API Key provided.' } }, { status: 401 });
  }
  const path = /^\/v1\/subscriptions\/([^/]+)$/.exec(url.pathname);
  if (path) {
    const id = decodeURIComponent(path[1]!);
    const subscription = subscriptions.get(id);
    if (!subscription) {
      return Response.json({ error: { type: 'invalid_request_error', code: 'resource_missing', param: 'id', message: `No such subscription: '${id}'` } }, { status: 404 });
    }
    // The package sends a DELETE's parameters in the query string, a POST's in the form body.
    const form = new URLSearchParams(request.method === 'DELETE' ? url.search : await request.text());
    if (request.method === 'DELETE') {
      if (subscription.status === 'canceled') {
        return Response.json({ error: { type: 'invalid_request_error', message: 'A canceled subscription can only update its cancellation_details and metadata.' } }, { status: 400 });
      }
      subscription.status = 'canceled';
      subscription.canceled_at = Math.floor(Date.now() / 1000);
      subscription.cancelled_with = { prorate: form.get('prorate') === 'true', invoice_now: form.get('invoice_now') === 'true' };
    } else if (request.method === 'POST') {
      // An empty value unsets a field, as Stripe takes it; a cancel_at date stays until unset.
      if (form.has('cancel_at')) subscription.cancel_at = form.get('cancel_at') ? Number(form.get('cancel_at')) : null;
      if (form.has('cancel_at_period_end')) {
        subscription.cancel_at_period_end = form.get('cancel_at_period_end') === 'true';
        if (subscription.cancel_at_period_end) subscription.cancel_at = periodEnds.get(id)!;
        else if (!form.has('cancel_at') && subscription.cancel_at === periodEnds.get(id)) subscription.cancel_at = null;
      }
    }
    return Response.json(subscription);
  }
  if (request.method === 'GET' && url.pathname === '/v1/invoice_payments') {
    const invoice = invoices.get(url.searchParams.get('invoice') ?? '');
    const paid = invoice && (url.searchParams.get('status') ?? 'paid') === 'paid';
    const data = paid
      ? [{ id: `inpay_${invoice.id}`, object: 'invoice_payment', invoice: invoice.id, status: 'paid', amount_paid: invoice.amount, amount_requested: invoice.amount, is_default: true, payment: { type: 'payment_intent', payment_intent: invoice.payment_intent } }]
      : [];
    return Response.json({ object: 'list', url: '/v1/invoice_payments', has_more: false, data });
  }
  const intent = /^\/v1\/payment_intents\/([^/]+)$/.exec(url.pathname);
  if (intent && request.method === 'GET') {
    const found = paymentIntents.get(decodeURIComponent(intent[1]!));
    if (!found) return Response.json({ error: { type: 'invalid_request_error', code: 'resource_missing', param: 'intent', message: `No such payment_intent: '${intent[1]}'` } }, { status: 404 });
    const charge = { id: `ch_${found.id}`, object: 'charge', amount: found.amount, amount_refunded: found.amount_refunded, refunded: found.amount_refunded === found.amount, payment_intent: found.id };
    // `expand[]=latest_charge` (the package sends `expand[0]`) answers the charge itself, as Stripe does; its id otherwise.
    const expanded = [...url.searchParams].some(([name, value]) => name.startsWith('expand[') && value === 'latest_charge');
    return Response.json({ id: found.id, object: 'payment_intent', amount: found.amount, status: 'succeeded', latest_charge: expanded ? charge : charge.id });
  }
  if (request.method === 'POST' && url.pathname === '/v1/refunds') {
    const form = new URLSearchParams(await request.text());
    const key = request.headers.get('idempotency-key') ?? crypto.randomUUID();
    if (!form.get('payment_intent')) return Response.json({ error: { type: 'invalid_request_error', message: 'One of `charge` or `payment_intent` is required.' } }, { status: 400 });
    // A second refund of a payment (another key, or Stripe's day of keys gone by) is Stripe's 400 charge_already_refunded.
    if (!refunds.has(key) && [...refunds.values()].some((refund) => refund.payment_intent === form.get('payment_intent'))) {
      return Response.json({ error: { type: 'invalid_request_error', code: 'charge_already_refunded', message: `Charge for ${form.get('payment_intent')} has already been refunded.` } }, { status: 400 });
    }
    if (!refunds.has(key)) {
      const metadata = Object.fromEntries([...form].filter(([name]) => name.startsWith('metadata[')).map(([name, value]) => [name.slice(9, -1), value]));
      refunds.set(key, { id: `re_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`, object: 'refund', payment_intent: form.get('payment_intent')!, reason: form.get('reason'), status: 'succeeded', metadata });
      const refunded = paymentIntents.get(form.get('payment_intent')!);
      if (refunded) refunded.amount_refunded = refunded.amount;
    }
    return Response.json(refunds.get(key));
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
    customer: field('customer'),
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
