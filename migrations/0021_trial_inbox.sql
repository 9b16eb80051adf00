-- The inbox whose confirmed address started an organization's free trial, in the form that says which inbox
-- it reaches (lowercase, without a +tag, Gmail's dots gone): one trial an inbox, not one an address.
ALTER TABLE organizations ADD COLUMN trial_inbox TEXT;
CREATE UNIQUE INDEX organizations_by_trial_inbox ON organizations (trial_inbox) WHERE trial_inbox IS NOT NULL;
