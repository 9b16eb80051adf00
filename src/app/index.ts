import { createApp } from '../core/http-app';
import { healthBody } from '../core/health';
import { type Env, publicUrls } from '../core/config';
import { publishedDocument } from '../core/openapi-document';
import { registerAgents } from './api/agents';
import { recordActivity } from './activity';
import { registerActivity } from './api/activity';
import { registerAuth, SECOND_FACTOR_PATH } from './api/auth';
import { EMAIL_LINK_PATHS, registerEmailLinks } from './api/email-links';
import { registerDatabases } from './api/databases';
import { registerBilling, STRIPE_WEBHOOK_PATH } from './api/billing';
import { registerJobs } from './api/jobs';
import { registerKeys } from './api/keys';
import { registerMcpServers } from './api/mcp-servers';
import { registerMe } from './api/me';
import { registerMembers } from './api/members';
import { registerOAuthConsent } from './api/oauth';
import { registerOrganizations } from './api/organizations';
import { PASSWORD_RESET_PATHS, registerPassword } from './api/password';
import { registerSandboxKeys } from './api/sandbox-keys';
import { registerTwoFactor } from './api/two-factor';
import { registerUsage } from './api/usage';
import { registerVendorConnections } from './api/vendor-connections';
import { registerWebhooks } from './api/webhooks';
import { requireSameOrigin } from './auth/origin';
import { requireSession } from './auth/require-session';
import { readSession } from './auth/sessions';
import type { DashboardEnv } from './context';
import { notFound } from './pages/not-found';
import { noticeExpiringKeys } from './key-expiry-notice';
import { registerPages } from './pages/routes';
import { securityHeaders } from './security-headers';

/** /api routes a person reaches before having a session. */
const OPEN_API_ROUTES = new Set(['/api/auth/sign-up', '/api/auth/sign-in', SECOND_FACTOR_PATH, '/api/auth/sign-out', ...PASSWORD_RESET_PATHS, ...EMAIL_LINK_PATHS, '/api/openapi.json', STRIPE_WEBHOOK_PATH]);

/**
 * The dashboard: server-rendered pages over its own JSON API under /api, in the spec's envelope, for
 * people signed in with a session cookie.
 */
export function buildDashboardApp() {
  // A missing page is answered with a page; the JSON API keeps the envelope.
  const app = createApp<DashboardEnv>({
    notFoundPage: async (c) => (c.req.path === '/api' || c.req.path.startsWith('/api/') ? undefined : notFound(c, await readSession(c))),
  });
  app.use(securityHeaders());
  // Stripe's webhook comes from Stripe, not a page: its signature is its proof, not its Origin.
  const sameOrigin = requireSameOrigin();
  app.use('/api/*', (c, next) => (c.req.path === STRIPE_WEBHOOK_PATH ? next() : sameOrigin(c, next)));
  const session = requireSession();
  app.use('/api/*', (c, next) => (OPEN_API_ROUTES.has(c.req.path) ? next() : session(c, next)));
  app.use('/api/*', recordActivity());

  // Liveness and the build served, as on the api worker (the deploy's smoke test compares the three).
  app.get('/health', (c) => c.json(healthBody(c.env.BUILD_ID), 200, { 'Cache-Control': 'no-store' }));
  registerAuth(app);
  registerPassword(app);
  registerEmailLinks(app);
  registerMe(app);
  registerTwoFactor(app);
  registerOrganizations(app);
  registerActivity(app);
  registerKeys(app);
  registerSandboxKeys(app);
  registerVendorConnections(app);
  registerMembers(app);
  registerBilling(app);
  registerUsage(app);
  registerOAuthConsent(app);
  registerMcpServers(app);
  registerWebhooks(app);
  registerDatabases(app);
  registerAgents(app);
  registerJobs(app);
  registerPages(app);

  app.openAPIRegistry.registerComponent('securitySchemes', 'session', {
    type: 'apiKey',
    in: 'cookie',
    name: 'sluice_session',
    description: 'The session cookie set by sign-up and sign-in (named __Host-sluice_session on https). State-changing requests must also come from the dashboard origin.',
  });
  // Built once per dashboard URL, as the api worker builds /openapi.json once per set of public URLs.
  const documents = new Map<string, string>();
  app.get('/api/openapi.json', (c) => {
    const appUrl = publicUrls(c.env).app;
    let text = documents.get(appUrl);
    if (text === undefined) {
      text = JSON.stringify(
        publishedDocument(
          app,
          {
            openapi: '3.0.0',
            info: { title: 'Sluice dashboard API', version: '1.0.0', description: "The JSON API the dashboard's own pages use: sessions, workspaces, keys, MCP tokens, agents, usage and credits." },
            servers: [{ url: appUrl }],
            security: [{ session: [] }],
          },
          appUrl,
        ),
      );
      documents.set(appUrl, text);
    }
    return c.body(text, 200, { 'content-type': 'application/json; charset=utf-8' });
  });

  return app;
}

const app = buildDashboardApp();

export default {
  fetch: app.fetch,
  /** The daily run of wrangler.toml's cron: the notices of keys about to expire. */
  scheduled: (_controller: ScheduledController, env: Env, ctx: ExecutionContext) => ctx.waitUntil(noticeExpiringKeys(env)),
} satisfies ExportedHandler<Env>;
