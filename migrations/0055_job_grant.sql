-- The OAuth grant that submitted a data job through an MCP client (services/jobs/submit.ts), null otherwise: the job
-- stops, as for a revoked submitting key, once the grant ends (disconnected, its person no longer a member or shut out
-- by a required second factor), rather than spending on for a credential that no longer may.
ALTER TABLE data_jobs ADD COLUMN grant_id TEXT;
