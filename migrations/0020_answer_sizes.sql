-- The size of an item's answer kept in R2, so a page of results knows where it ends before R2 is asked.
ALTER TABLE data_job_items ADD COLUMN data_bytes INTEGER;
