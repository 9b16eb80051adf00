import type { Operation } from '../../core/operation';
import { OPERATIONS } from '../../operations';

/** The registry's operation a job names as '<slug>/<operation>' (as /v1/data/<slug>/<operation>), if any. */
export function operationOfJob(name: string): Operation | undefined {
  const [platform, operation, ...rest] = name.split('/');
  if (rest.length > 0) return undefined;
  return OPERATIONS.find((entry) => entry.platform === platform && entry.name === operation && entry.paths.some((path) => path.startsWith('/v1/data/')));
}
