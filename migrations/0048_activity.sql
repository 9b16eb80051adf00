-- What people did to an organization through the dashboard (app/activity.ts): who, what, in which workspace, to
-- what, and when. Written once a change has succeeded; read newest first, a page at a time by id; kept 400 days.
CREATE TABLE activity (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  organization_id  TEXT NOT NULL,
  workspace_id     TEXT,
  actor_user_id    TEXT,
  action           TEXT NOT NULL,
  target           TEXT,
  detail           TEXT,
  created_at       TEXT NOT NULL
);
CREATE INDEX activity_by_organization ON activity (organization_id, id);
CREATE INDEX activity_by_time ON activity (created_at);
