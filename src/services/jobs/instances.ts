import type { Env } from '../../core/config';

/**
 * Lets go of a Workflow instance handle nothing here uses further: locally (Miniflare) it is an RPC result
 * that holds its connection until it is disposed or collected, which workerd warns of.
 */
export function release(instance: WorkflowInstance): void {
  (instance as Partial<Disposable>)[Symbol.dispose]?.();
}

/**
 * Whether the platform has a job's Workflow instance: true, false when it says it has none
 * (`instance.not_found`), null when it could not say (any other failure).
 */
export async function runExists(env: Pick<Env, 'DATA_JOBS'>, jobId: string): Promise<boolean | null> {
  try {
    release(await env.DATA_JOBS.get(jobId));
    return true;
  } catch (error) {
    return String(error).includes('not_found') ? false : null;
  }
}
