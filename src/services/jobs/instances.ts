import type { Env } from '../../core/config';

/**
 * Lets go of a Workflow instance handle nothing here uses further: locally (Miniflare) it is an RPC result
 * that holds its connection until it is disposed or collected, which workerd warns of.
 */
export function release(instance: WorkflowInstance): void {
  (instance as Partial<Disposable>)[Symbol.dispose]?.();
}

/**
 * A job's Workflow instance, or null when the platform says it has none (`instance.not_found`); any other
 * failure is thrown, since it says nothing about whether the run exists.
 */
export async function findRun(env: Pick<Env, 'DATA_JOBS'>, jobId: string): Promise<WorkflowInstance | null> {
  try {
    return await env.DATA_JOBS.get(jobId);
  } catch (error) {
    if (String(error).includes('not_found')) return null;
    throw error;
  }
}

/** Whether the platform has a job's Workflow instance: true, false when it says it has none, null when it could not say. */
export async function runExists(env: Pick<Env, 'DATA_JOBS'>, jobId: string): Promise<boolean | null> {
  try {
    const instance = await findRun(env, jobId);
    if (instance) release(instance);
    return instance !== null;
  } catch {
    return null;
  }
}
