import type { z } from '@hono/zod-openapi';
import type { KeyPrincipal } from '../core/records';
import { publicUrls, type Env } from '../core/config';
import { createDatabase, listDatabases, queryDatabase } from '../services/databases';
import { recordOnboarding } from '../services/onboarding';
import { admitFreeCall } from '../services/pipeline';
import { validationErrorFromZod } from '../core/validation';
import { listEndpointsWithDeliveries } from '../services/webhooks/endpoints';
import { WORKSPACE_TOOLS, type WorkspaceToolName } from '../services/workspace-tools';
import { assertResultsKept, findWorkspaceJob, resultsPage, viewOf } from '../services/jobs/store';
import { submitJobOnce } from '../services/jobs/submit';
import { idempotencyKeyFromMcpMeta, sentIdempotencyKey } from '../services/idempotency';
import { ApiError } from '../core/errors';

/**
 * What each workspace tool does once its arguments are valid: the very functions of its REST twin. `meta` is
 * the call's `_meta`: `idempotency_key` there makes a job submission safe to retry, as the header does on REST.
 */
export async function runWorkspaceTool(env: Env, principal: KeyPrincipal, name: WorkspaceToolName, input: unknown, meta?: unknown): Promise<unknown> {
  switch (name) {
    case 'sluice_onboarding': {
      // Free, but each call is a row in D1: it counts in the workspace's window as every free call does.
      const intent = argumentsOf(name, input);
      await admitFreeCall(env, principal);
      return recordOnboarding(env.DB, publicUrls(env), intent, { surface: 'mcp', workspaceId: principal.workspaceId, organizationId: principal.organizationId });
    }
    case 'sluice_db_list':
      argumentsOf(name, input);
      await admitFreeCall(env, principal);
      return { databases: await listDatabases(env.DB, principal.workspaceId) };
    case 'sluice_db_create': {
      const { name: databaseName } = argumentsOf(name, input);
      await admitFreeCall(env, principal);
      return createDatabase(env, principal, databaseName);
    }
    case 'sluice_db_query': {
      const { databaseId, ...query } = argumentsOf(name, input);
      await admitFreeCall(env, principal);
      return queryDatabase(env, principal.workspaceId, databaseId, query);
    }
    case 'sluice_jobs_submit': {
      const submission = argumentsOf(name, input);
      const key = sentIdempotencyKey(idempotencyKeyFromMcpMeta(meta));
      await admitFreeCall(env, principal);
      return (await submitJobOnce(env, principal, submission, key)).view;
    }
    case 'sluice_jobs_status': {
      const { jobId } = argumentsOf(name, input);
      await admitFreeCall(env, principal);
      return viewOf(await workspaceJob(env, principal, jobId));
    }
    case 'sluice_jobs_results': {
      const { jobId, ...query } = argumentsOf(name, input);
      await admitFreeCall(env, principal);
      const job = await workspaceJob(env, principal, jobId);
      assertResultsKept(job);
      return resultsPage(env, job.id, query);
    }
    case 'sluice_webhook_endpoints_list': {
      argumentsOf(name, input);
      return { endpoints: await listEndpointsWithDeliveries(env, principal.workspaceId) };
    }
  }
}

/** The tool's arguments as its schema reads them; a refusal names the fields, as REST does. */
function argumentsOf<N extends WorkspaceToolName>(name: N, input: unknown): z.infer<(typeof WORKSPACE_TOOLS)[N]['input']> {
  const parsed = WORKSPACE_TOOLS[name].input.safeParse(input);
  if (!parsed.success) throw validationErrorFromZod(parsed.error, 'body');
  return parsed.data as z.infer<(typeof WORKSPACE_TOOLS)[N]['input']>;
}

async function workspaceJob(env: Env, principal: KeyPrincipal, jobId: string) {
  const job = await findWorkspaceJob(env.DB, principal.workspaceId, jobId);
  if (!job) throw ApiError.notFound(`No data job ${jobId} in this workspace.`);
  return job;
}
