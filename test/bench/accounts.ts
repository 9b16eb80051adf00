/** The organization every bench loads (`run.ts`, `ab.ts`, `instructions.ts`), made through the operator API. */
import type { OpsClient } from '../../scripts/lib/ops-client';

/**
 * An organization on the business plan with a window far above what the machine can serve and a million
 * dollars of credit, so a bench measures the pipeline, not the limiter or the balance. Answers its id.
 */
export async function unboundedOrganization(ops: Pick<OpsClient, 'call'>, name: string): Promise<string> {
  const organization = await ops.call<{ id: string }>('POST', '/ops/v1/organizations', { name, plan: 'business' });
  await ops.call('PUT', `/ops/v1/organizations/${organization.id}/plan`, { plan: 'business', rpm: 1_000_000 });
  await ops.call('POST', `/ops/v1/organizations/${organization.id}/wallet/credit`, { purchasedCents: 100_000_000 });
  return organization.id;
}
