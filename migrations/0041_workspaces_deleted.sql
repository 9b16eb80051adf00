-- A workspace an owner or admin deleted (services/workspace-deletion.ts): kept, so its usage rows and the
-- organization's bill still name it, but read as missing everywhere and no longer counted against the plan's cap.
ALTER TABLE workspaces ADD COLUMN deleted_at TEXT;
