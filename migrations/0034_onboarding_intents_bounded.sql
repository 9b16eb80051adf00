-- A workspace keeps its newest intents (services/onboarding.ts trims the rest as it records one), and the daily run
-- deletes intents past their retention (services/record-retention.ts): each through its own index.
CREATE INDEX onboarding_intents_by_workspace ON onboarding_intents (workspace_id, created_at);
CREATE INDEX onboarding_intents_by_time ON onboarding_intents (created_at);
