-- Top-ups as Stripe took them (app/billing.ts): which organization a payment credited, so that its refund or dispute,
-- whose events name the payment and not the organization, takes the credit back (the organization's wallet keeps what
-- was taken back of it). Kept as long as Stripe's events are.
CREATE TABLE stripe_payments (
  payment_intent TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL,
  cents INTEGER NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX stripe_payments_by_time ON stripe_payments (created_at);
