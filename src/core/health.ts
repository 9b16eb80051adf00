import packageJson from '../../package.json';
import { success } from './envelope';

/**
 * What GET /health answers on each worker: up, the version and the build served (BUILD_ID, set by
 * `npm run deploy`; "dev" locally). The deploy's smoke test reads it from the three workers to see that
 * they serve the same build.
 */
export function healthBody(buildId: string | undefined) {
  return success({ status: 'ok' as const, version: packageJson.version, build: buildId ?? 'dev' });
}
