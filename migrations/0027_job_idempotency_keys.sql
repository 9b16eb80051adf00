-- A job submitted with an Idempotency-Key: the key, and the SHA-256 of the submission it came with. A retry
-- with the same key and body answers the job already made instead of making a second one (which would run
-- and bill the items twice); the same key with another body is refused. One job a key in a workspace.
ALTER TABLE data_jobs ADD COLUMN idempotency_key TEXT;
ALTER TABLE data_jobs ADD COLUMN submission_digest TEXT;
CREATE UNIQUE INDEX data_jobs_by_idempotency_key ON data_jobs (workspace_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
