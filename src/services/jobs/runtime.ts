import type { Env } from '../../core/config';
import type { KeyPrincipal } from '../../core/records';
import { revokedKeyError } from '../auth';
import { findJobByKey, isEnded } from './store';
import { admitJobHour } from '../runtime-hours';

/**
 * The runtime's rule for a data job's key (scope data_job) on /runtime/data: its job exists and has not
 * ended, and the call's hour fits under the plan's runtime hours (counted as the job's own calls are). The gate refuses the key once the job ends (its key is revoked there first); this catches a key
 * whose job row says so before the revocation reached the gate.
 */
export async function admitJobCall(env: Env, principal: KeyPrincipal): Promise<void> {
  const job = await findJobByKey(env.DB, principal.keyId);
  if (!job || isEnded(job.status)) throw revokedKeyError(env);
  await admitJobHour(env.DB, { jobId: job.id, organizationId: job.organizationId });
}
