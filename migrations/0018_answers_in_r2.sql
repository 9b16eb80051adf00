-- A data job item's answer larger than INLINE_DATA_BYTES (2 KB) is kept in R2 (the RESULTS bucket) under this
-- key, and `data` is NULL; smaller answers stay inline. D1 then holds at most that much of any item's answer.
ALTER TABLE data_job_items ADD COLUMN data_key TEXT;
