-- Usage summed as rows arrive, per workspace, operation and UTC day (and hour), so a report over a month
-- reads about 30 day buckets and 48 hour buckets per operation plus the rows of its two partial edge hours,
-- instead of every row (services/usage-report.ts).
CREATE TABLE usage_daily (
  workspace_id  TEXT NOT NULL,
  -- The UTC day, as the first 10 characters of created_at: YYYY-MM-DD.
  day           TEXT NOT NULL,
  operation     TEXT NOT NULL,
  calls         INTEGER NOT NULL,
  succeeded     INTEGER NOT NULL,
  -- Money in units of 1/10,000 cent.
  cost_units    INTEGER NOT NULL,
  PRIMARY KEY (workspace_id, day, operation)
) WITHOUT ROWID;

CREATE TABLE usage_hourly (
  workspace_id  TEXT NOT NULL,
  -- The UTC hour, as the first 13 characters of created_at: YYYY-MM-DDTHH.
  hour          TEXT NOT NULL,
  operation     TEXT NOT NULL,
  calls         INTEGER NOT NULL,
  succeeded     INTEGER NOT NULL,
  cost_units    INTEGER NOT NULL,
  PRIMARY KEY (workspace_id, hour, operation)
) WITHOUT ROWID;

-- A row counts once: INSERT OR IGNORE of a row already there (an outbox batch sent again) fires nothing.
CREATE TRIGGER usage_totals_on_insert AFTER INSERT ON usage
BEGIN
  INSERT INTO usage_daily (workspace_id, day, operation, calls, succeeded, cost_units)
  VALUES (NEW.workspace_id, substr(NEW.created_at, 1, 10), NEW.operation, 1, NEW.status < 400, NEW.cost_units)
  ON CONFLICT (workspace_id, day, operation) DO UPDATE SET
    calls = calls + 1, succeeded = succeeded + excluded.succeeded, cost_units = cost_units + excluded.cost_units;
  INSERT INTO usage_hourly (workspace_id, hour, operation, calls, succeeded, cost_units)
  VALUES (NEW.workspace_id, substr(NEW.created_at, 1, 13), NEW.operation, 1, NEW.status < 400, NEW.cost_units)
  ON CONFLICT (workspace_id, hour, operation) DO UPDATE SET
    calls = calls + 1, succeeded = succeeded + excluded.succeeded, cost_units = cost_units + excluded.cost_units;
END;

INSERT INTO usage_daily (workspace_id, day, operation, calls, succeeded, cost_units)
SELECT workspace_id, substr(created_at, 1, 10), operation, COUNT(*), SUM(status < 400), SUM(cost_units)
  FROM usage GROUP BY workspace_id, substr(created_at, 1, 10), operation;

INSERT INTO usage_hourly (workspace_id, hour, operation, calls, succeeded, cost_units)
SELECT workspace_id, substr(created_at, 1, 13), operation, COUNT(*), SUM(status < 400), SUM(cost_units)
  FROM usage GROUP BY workspace_id, substr(created_at, 1, 13), operation;
