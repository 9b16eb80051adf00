/**
 * A condition for a statement that makes something in a workspace: true only while the workspace is live (not
 * deleted: services/workspace-deletion.ts). D1 runs one statement at a time, so a row made under it either precedes
 * a deletion's mark, and the deletion's sweep finds it, or is not made: a request that passed its checks before the
 * deletion cannot leave a row behind it. `placeholder` is the statement's parameter holding the workspace id.
 */
export const workspaceIsLive = (placeholder: string) => `EXISTS (SELECT 1 FROM workspaces WHERE id = ${placeholder} AND deleted_at IS NULL)`;

/** Whether the workspace exists and is not deleted: what a statement under `workspaceIsLive` that made nothing asks next. */
export async function isLiveWorkspace(db: D1Database, workspaceId: string): Promise<boolean> {
  return (await db.prepare('SELECT 1 FROM workspaces WHERE id = ? AND deleted_at IS NULL').bind(workspaceId).first()) !== null;
}
