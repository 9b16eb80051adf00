import { requireAgentKey, requireApiKey } from '../services/auth';
import { OPERATIONS } from '../operations';
import { createApp } from '../core/http-app';
import { registerAgentSetup } from './routes/agent-setup';
import { registerCredits } from './routes/credits';
import { DATABASE_PATHS, registerDatabases } from './routes/databases';
import { registerDocs } from './routes/docs';
import { registerOperations } from './routes/data';
import { registerHealth } from './routes/health';
import { registerConnections } from './routes/connections';
import { jobsBodyLimit, registerJobs } from './routes/jobs';
import { registerLlmsTxt } from './routes/llms-txt';
import { registerOps } from './routes/ops';
import { registerPlans } from './routes/plans';
import { registerPlatforms } from './routes/platforms';
import { registerReference } from './routes/reference';
import { REGISTER_PATH, registerRegister } from './routes/register';
import { registerRetiredPaths } from './routes/retired-paths';
import { registerRoot } from './routes/root';
import { registerRuntime, RUNTIME_DATA_ROUTES } from './routes/runtime';
import { registerUsage } from './routes/usage';
import { registerWebhookEndpoints } from './routes/webhook-endpoints';
import type { Env } from '../core/config';
import type { NightlyMessage } from '../core/protocols/nightly';
import { consumeNightly, nightly } from './nightly';

/**
 * `/v1` routes that need no credential (spec REST rule 5); everything else under `/v1` needs a workspace key. An
 * `x-api-key` header is refused on these too (rule 1: "401 on every request"), so the mistake shows on a first try.
 */
const PUBLIC_V1 = /^\/v1\/(platforms|plans)(\/|$)/;
/** Routes under /v1 that check an optional key themselves. */
const OWN_AUTHENTICATION = new Set([REGISTER_PATH]);

/** Routes whose handler checks the key in the one gate call it makes anyway: metered calls and /v1/credits. */
const CHECKED_BY_HANDLER = new Set(['GET /v1/credits', ...OPERATIONS.flatMap((operation) => operation.paths.map((path) => `${operation.method} ${path}`))]);

export function buildApiApp() {
  const app = createApp({ maxBodyBytes: jobsBodyLimit });
  const authenticate = requireApiKey((method, path) => CHECKED_BY_HANDLER.has(`${method} ${path}`) || DATABASE_PATHS.test(path));
  app.use('/v1/*', (c, next) => {
    const open = OWN_AUTHENTICATION.has(c.req.path) || (PUBLIC_V1.test(c.req.path) && c.req.header('x-api-key') === undefined);
    return open ? next() : authenticate(c, next);
  });

  registerRoot(app);
  registerHealth(app);
  registerPlatforms(app);
  registerPlans(app);
  registerAgentSetup(app);
  registerCredits(app);
  registerUsage(app);
  registerWebhookEndpoints(app);
  registerDatabases(app);
  registerConnections(app);
  registerJobs(app);
  registerOperations(app, authenticate);
  registerRuntime(app, requireAgentKey((method, path) => RUNTIME_DATA_ROUTES.has(`${method} ${path}`)));
  registerRegister(app, authenticate);
  registerRetiredPaths(app);
  registerOps(app);
  registerReference(app);
  registerDocs(app);
  registerLlmsTxt(app);
  return app;
}

export { DataJobWorkflow } from '../../durable-objects/job-workflow';
export { IdempotencyStore } from '../../durable-objects/idempotency-store';
export { OrgWallet } from '../../durable-objects/org-wallet';
export { McpGateway } from './mcp-gateway';
export { WorkspaceGate } from '../../durable-objects/workspace-gate';
export { WebhookSender } from '../../durable-objects/webhook-sender';
export { WorkspaceDatabase } from '../../durable-objects/workspace-database';

const app = buildApiApp();

export default {
  fetch: app.fetch,
  /** The cron of wrangler.toml: the nightly work (./nightly.ts). */
  scheduled: (_controller, env, ctx) => ctx.waitUntil(nightly(env)),
  /** The nightly queue (wrangler.toml [[queues.consumers]]): what the cron started, carried on. */
  queue: (batch, env) => consumeNightly(env, batch as MessageBatch<NightlyMessage>),
} satisfies ExportedHandler<Env>;
