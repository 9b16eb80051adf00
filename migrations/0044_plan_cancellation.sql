-- When the organization's paid subscription ends because it was cancelled at the end of its period (the Plans
-- page's "Cancel plan", or Stripe's dashboard): NULL while it renews. Kept in step by the Stripe webhook.
ALTER TABLE organizations ADD COLUMN plan_cancels_at TEXT;
