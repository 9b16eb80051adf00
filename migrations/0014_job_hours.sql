-- Runtime hours of data jobs, counted with agents' under the plan's monthly `runtimeHours` cap: one row per
-- job and UTC clock hour ('2026-11-24T16:00:00.000Z') in which it made at least one call.
CREATE TABLE job_hours (
  job_id           TEXT NOT NULL REFERENCES data_jobs (id),
  hour             TEXT NOT NULL,
  organization_id  TEXT NOT NULL REFERENCES organizations (id),
  PRIMARY KEY (job_id, hour)
);
CREATE INDEX job_hours_by_organization ON job_hours (organization_id, hour);
