-- What a data job waiting for credits waits for (NULL while it does not wait): money, a plan, or the monthly
-- limit of the key that submitted it. The dashboard offers the way out that fits (credit and plans, or the
-- key's limit); the API answers it as `waitingOn`.
ALTER TABLE data_jobs ADD COLUMN waiting_on TEXT CHECK (waiting_on IN ('money', 'plan', 'key_limit'));
