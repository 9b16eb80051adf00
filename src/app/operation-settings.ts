import { mcpToolName, type Operation } from '../core/operation';
import type { DashboardEnv } from './context';

/**
 * What each operation still needs on this installation (its vendor's key, DataForSEO's login), by MCP tool name, as
 * the api worker says: it holds the vendors' secrets, which the dashboard is not given. Null when it cannot be asked
 * (no API binding, or it failed): then nothing is refused here, and a job's items say what is missing, uncharged.
 */
export async function missingSettingsHere(env: DashboardEnv['Bindings']): Promise<((operation: Operation) => readonly string[]) | null> {
  if (!env.API) return null;
  try {
    const missing = await env.API.missingSettings();
    return (operation) => missing[mcpToolName(operation)] ?? [];
  } catch (error) {
    console.error(JSON.stringify({ level: 'error', note: "the api worker's settings could not be read", error: String(error) }));
    return null;
  }
}
