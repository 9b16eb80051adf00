-- Top-ups as Stripe took them (app/billing.ts): which organization a payment credited, so that its refund or dispute,
-- whose events name the payment and not the organization, takes the credit back. `refunded_cents` is the most Stripe has
-- said was refunded of it (charge.refunded carries the running total). Kept as long as Stripe's events are.
CREATE TABLE stripe_payments (
  payment_intent TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL,
  cents INTEGER NOT NULL,
  refunded_cents INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL
);
CREATE INDEX stripe_payments_by_time ON stripe_payments (created_at);
