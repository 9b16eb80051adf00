-- A job's counts and spend are kept as its items are decided, not counted again from every item after each
-- slice: that count read all of a job's decided items three times a slice (a 100,000-item job read some 150
-- million rows over its run, 147 ms a slice at its end), so a job's cost grew with the square of its size.
-- An item is decided once: its writes change it only while it is pending (services/jobs/store.ts), so a slice
-- run again, whose writes change nothing, fires nothing and counts nothing twice.
CREATE TRIGGER data_job_items_decided AFTER UPDATE OF status ON data_job_items
WHEN OLD.status = 'pending' AND NEW.status <> 'pending'
BEGIN
  UPDATE data_jobs SET
    succeeded = succeeded + (NEW.status = 'succeeded'),
    failed = failed + (NEW.status = 'failed'),
    spent_units = spent_units + (CASE WHEN NEW.status = 'succeeded' THEN NEW.cost_units ELSE 0 END)
   WHERE id = NEW.job_id;
END;

-- Jobs not yet ended were counted at their last slice, in the batch that wrote its items; counted once more
-- here, so the trigger starts from the items as they are. Ended jobs keep their counts (their items may be pruned).
UPDATE data_jobs SET
  succeeded = (SELECT COUNT(*) FROM data_job_items WHERE job_id = data_jobs.id AND status = 'succeeded'),
  failed = (SELECT COUNT(*) FROM data_job_items WHERE job_id = data_jobs.id AND status = 'failed'),
  spent_units = (SELECT COALESCE(SUM(cost_units), 0) FROM data_job_items WHERE job_id = data_jobs.id AND status = 'succeeded')
 WHERE finished_at IS NULL;
