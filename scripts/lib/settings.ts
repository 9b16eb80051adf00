import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROJECT_ROOT } from './home';

/**
 * The names of SETTINGS in src/core/config.ts, the one list of what an installation can configure.
 * Imported by path at run time (tsx runs the TypeScript), so the Node typecheck of scripts/ does not
 * follow the worker's own type graph (workers-types, cloudflare:workers) into src/.
 */
export async function loadSettingNames(): Promise<string[]> {
  const config = pathToFileURL(join(PROJECT_ROOT, 'src', 'core', 'config.ts')).href;
  const { SETTINGS } = (await import(config)) as { SETTINGS: Record<string, string> };
  return Object.keys(SETTINGS);
}
