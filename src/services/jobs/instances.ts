import type { Env } from '../../core/config';

/**
 * Lets go of an RPC result once it has been read: a Workflow instance handle, or what a step of a run answered.
 * Such a result holds what its call carried (its connection, the step's callback) until it is disposed or
 * collected, and workerd warns when the collector gets there first ("An RPC result was not disposed
 * properly"). The data in it stays readable. Anything that is no RPC result is left as it is.
 */
export function release(result: unknown): void {
  if (typeof result === 'object' && result !== null) (result as Partial<Disposable>)[Symbol.dispose]?.();
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
