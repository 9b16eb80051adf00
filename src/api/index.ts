import { requireApiKey } from '../core/auth';
import { createApp } from './app';
import { registerAgentSetup } from './routes/agent-setup';
import { registerHealth } from './routes/health';
import { registerOps } from './routes/ops';
import { registerPlatforms } from './routes/platforms';
import { registerReference } from './routes/reference';

/** `/v1` routes that need no credential (spec REST rule 5); everything else under `/v1` needs a workspace key. */
const PUBLIC_V1 = /^\/v1\/platforms(\/|$)/;

export function buildApiApp() {
  const app = createApp();
  const authenticate = requireApiKey();
  app.use('/v1/*', (c, next) => (PUBLIC_V1.test(c.req.path) ? next() : authenticate(c, next)));

  registerHealth(app);
  registerPlatforms(app);
  registerAgentSetup(app);
  registerOps(app);
  registerReference(app);
  return app;
}

export default buildApiApp();
