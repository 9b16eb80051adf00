-- A call id's success that reaches D1 after a failure's row under the same id (a retry that took the id over after
-- the first try's row had been sent: decisions.md, "A call id's twin in the gate") takes that row's place: the
-- insert's upsert rewrites the row's outcome, and this trigger moves the day and hour buckets the row counted in
-- from a failure to a success. The row keeps its first time, so it stays in the buckets it was counted in.
CREATE TRIGGER usage_totals_on_success_over_failure AFTER UPDATE OF status ON usage
WHEN OLD.status >= 400 AND NEW.status < 400
BEGIN
  UPDATE usage_daily SET succeeded = succeeded + (NEW.sandbox = 0), cost_units = cost_units - OLD.cost_units + NEW.cost_units
   WHERE workspace_id = NEW.workspace_id AND day = substr(NEW.created_at, 1, 10) AND operation = NEW.operation;
  UPDATE usage_hourly SET succeeded = succeeded + (NEW.sandbox = 0), cost_units = cost_units - OLD.cost_units + NEW.cost_units
   WHERE workspace_id = NEW.workspace_id AND hour = substr(NEW.created_at, 1, 13) AND operation = NEW.operation;
END;
