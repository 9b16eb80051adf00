-- Stopped agents are deleted once the usage rows that could name them are gone (record-retention.ts): found by
-- when they stopped, through this partial index, rather than by reading every agent each night.
CREATE INDEX agents_stopped ON agents (stopped_at) WHERE status = 'stopped';
