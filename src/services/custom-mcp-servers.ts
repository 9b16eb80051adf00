import { clock } from '../core/clock';
import { ReadBehind } from '../core/read-behind';
import { ApiError } from '../core/errors';
import { isLiveWorkspace, workspaceIsLive } from './live-workspaces';
import { newId } from '../core/ids';
import { type CatalogTool, DATA_TOOLS } from '../operations/tools';

/**
 * A workspace's own MCP servers: a name and a chosen set of tools, served at /mcp/s/<id>. The one marked
 * default is what the bare /mcp serves to that workspace (the spec: a client pointed at the canonical
 * URL, with no resource indicator, gets the workspace's default server).
 */
export interface CustomServer {
  id: string;
  workspaceId: string;
  name: string;
  tools: string[];
  isDefault: boolean;
  createdAt: string;
}

interface ServerRow {
  id: string;
  workspaceId: string;
  name: string;
  tools: string;
  isDefault: number;
  createdAt: string;
}

const COLUMNS = 'id, workspace_id AS workspaceId, name, tools, is_default AS isDefault, created_at AS createdAt';

function fromRow(row: ServerRow): CustomServer {
  return { ...row, tools: JSON.parse(row.tools) as string[], isDefault: row.isDefault === 1 };
}

const TOOLS_BY_NAME = new Map(DATA_TOOLS.map((tool) => [tool.name, tool]));

/** The catalog tools a server serves, in catalog order (a tool since removed from the catalog is skipped). */
export function toolsOfServer(server: CustomServer): CatalogTool[] {
  const chosen = new Set(server.tools);
  return DATA_TOOLS.filter((tool) => chosen.has(tool.name));
}

export function unknownTools(names: string[]): string[] {
  return names.filter((name) => !TOOLS_BY_NAME.has(name));
}

export async function listServers(db: D1Database, workspaceId: string): Promise<CustomServer[]> {
  const { results } = await db.prepare(`SELECT ${COLUMNS} FROM mcp_servers WHERE workspace_id = ? ORDER BY created_at, id`).bind(workspaceId).all<ServerRow>();
  return results.map(fromRow);
}

export async function findServer(db: D1Database, id: string): Promise<CustomServer | undefined> {
  const row = await db.prepare(`SELECT ${COLUMNS} FROM mcp_servers WHERE id = ?`).bind(id).first<ServerRow>();
  return row ? fromRow(row) : undefined;
}

export async function defaultServer(db: D1Database, workspaceId: string): Promise<CustomServer | undefined> {
  const row = await db.prepare(`SELECT ${COLUMNS} FROM mcp_servers WHERE workspace_id = ? AND is_default = 1`).bind(workspaceId).first<ServerRow>();
  return row ? fromRow(row) : undefined;
}

/**
 * The workspace's default server as /mcp serves it, remembered by this isolate: every MCP request asks, and a
 * database read per request was the ceiling of the MCP bench. After 30 seconds it is read again beside the
 * request that finds it that old, which is served what was remembered, so a new default (or none) reaches /mcp
 * a read after the 30 seconds; it only changes which tools are listed, never who may call.
 */
const defaults = new ReadBehind<CustomServer | undefined>({ name: "a workspace's default MCP server", freshMs: 30_000, usableMs: 10 * 60_000, maxEntries: 10_000 });

export function servedDefault(db: D1Database, workspaceId: string, waitUntil: (promise: Promise<unknown>) => void): Promise<CustomServer | undefined> {
  return defaults.get(workspaceId, () => defaultServer(db, workspaceId), waitUntil);
}

/** Servers a workspace holds at most: each is listed whole on the MCP servers page, with up to every tool's name. */
export const MAX_SERVERS_PER_WORKSPACE = 100;

/** Makes a server, if the workspace is live and has room: the count is in the insert, so two made at once cannot both take the last place. */
export async function createServer(db: D1Database, input: { workspaceId: string; name: string; tools: string[] }): Promise<CustomServer> {
  const server: CustomServer = { id: newId('mcps'), workspaceId: input.workspaceId, name: input.name, tools: [...new Set(input.tools)], isDefault: false, createdAt: new Date(clock.now()).toISOString() };
  const stored = await db
    .prepare(
      `INSERT INTO mcp_servers (id, workspace_id, name, tools, is_default, created_at) SELECT ?1, ?2, ?3, ?4, 0, ?5
        WHERE ${workspaceIsLive('?2')} AND (SELECT COUNT(*) FROM mcp_servers WHERE workspace_id = ?2) < ?6`,
    )
    .bind(server.id, server.workspaceId, server.name, JSON.stringify(server.tools), server.createdAt, MAX_SERVERS_PER_WORKSPACE)
    .run();
  if (stored.meta.changes === 1) return server;
  if (!(await isLiveWorkspace(db, server.workspaceId))) throw ApiError.notFound(`No workspace ${server.workspaceId}.`);
  throw ApiError.conflict(`A workspace has at most ${MAX_SERVERS_PER_WORKSPACE} MCP servers; delete one first.`);
}

/** Marks one server the workspace's default (unmarking the previous one), or none when id is null. */
export async function setDefaultServer(db: D1Database, workspaceId: string, id: string | null): Promise<void> {
  const statements = [db.prepare('UPDATE mcp_servers SET is_default = 0 WHERE workspace_id = ? AND is_default = 1').bind(workspaceId)];
  if (id) statements.push(db.prepare('UPDATE mcp_servers SET is_default = 1 WHERE workspace_id = ? AND id = ?').bind(workspaceId, id));
  await db.batch(statements);
}

/** Deletes a server and ends the OAuth grants made for it (their tokens could reach nothing anyway). */
export async function deleteServer(db: D1Database, server: CustomServer, resource: string): Promise<void> {
  const now = new Date(clock.now()).toISOString();
  await db.batch([
    db.prepare('DELETE FROM mcp_servers WHERE id = ?').bind(server.id),
    db.prepare(`UPDATE oauth_grants SET revoked_at = ?, revoked_reason = 'server deleted' WHERE workspace_id = ? AND resource = ? AND revoked_at IS NULL`).bind(now, server.workspaceId, resource),
  ]);
}

export function serverOrNotFound(server: CustomServer | undefined, workspaceId: string, id: string): CustomServer {
  if (!server || server.workspaceId !== workspaceId) throw ApiError.notFound(`No MCP server ${id} in workspace ${workspaceId}.`);
  return server;
}
