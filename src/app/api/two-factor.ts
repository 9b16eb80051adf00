import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { success } from '../../core/envelope';
import { clearAttempts, countAttempt } from '../../core/throttle';
import { errorResponses, jsonContent, successEnvelope } from '../../core/schemas';
import type { DashboardEnv } from '../context';
import {
  beginSetup,
  confirmSetup,
  disableTwoFactor,
  replaceRecoveryCodes,
  tellTwoFactorChange,
  TWO_FACTOR_CHANGES_PER_USER,
  TWO_FACTOR_CODES_PER_USER,
  twoFactorState,
} from '../two-factor';
import { withCurrentPassword } from '../users';
import { organizationsRequiringTwoFactor } from '../members';
import { signOutOtherBrowsers } from '../signed-in-browsers';
import { ApiError } from '../../core/errors';
import { CurrentPasswordBody, jsonBody, RecoveryCodes, TwoFactorCodeBody, TwoFactorSetup, TwoFactorState } from './schemas';

const PATH = '/api/me/two-factor';
const withPassword = `Asks for the current password (a 400 naming \`currentPassword\` when wrong; ${TWO_FACTOR_CHANGES_PER_USER.limit} tries a quarter hour, then 429 with Retry-After).`;

const routes = {
  state: createRoute({
    method: 'get',
    path: PATH,
    tags: ['Account'],
    summary: 'Whether two-factor sign-in is on, and how many recovery codes are left',
    operationId: 'getTwoFactor',
    responses: { 200: jsonContent(successEnvelope(TwoFactorState), 'The account\'s second factor.'), ...errorResponses(401) },
  }),
  setup: createRoute({
    method: 'post',
    path: `${PATH}/setup`,
    tags: ['Account'],
    summary: 'Set up an authenticator app: a new secret and its QR code, in force once a code confirms it',
    description: `${withPassword} Setting up again replaces a secret not yet confirmed; 409 when two-factor sign-in is already on; 403 until the email address is confirmed.`,
    operationId: 'setUpTwoFactor',
    request: { body: jsonBody(CurrentPasswordBody) },
    responses: { 200: jsonContent(successEnvelope(TwoFactorSetup), 'Scan the QR code, then confirm with the code the app shows.'), ...errorResponses(400, 401, 403, 409, 429) },
  }),
  confirm: createRoute({
    method: 'post',
    path: `${PATH}/confirm`,
    tags: ['Account'],
    summary: 'Turn two-factor sign-in on with the first code the app shows',
    description: `A wrong code is a 400 naming \`code\` (${TWO_FACTOR_CODES_PER_USER.limit} a quarter hour); 409 when no setup is waiting. The account's address is told, and its other browsers are signed out.`,
    operationId: 'confirmTwoFactor',
    request: { body: jsonBody(TwoFactorCodeBody) },
    responses: { 200: jsonContent(successEnvelope(RecoveryCodes), 'On; the recovery codes are shown this once.'), ...errorResponses(400, 401, 403, 409, 429) },
  }),
  recoveryCodes: createRoute({
    method: 'post',
    path: `${PATH}/recovery-codes`,
    tags: ['Account'],
    summary: 'Make new recovery codes; the old ones stop working',
    description: `${withPassword} 409 when two-factor sign-in is off. The account's address is told.`,
    operationId: 'replaceRecoveryCodes',
    request: { body: jsonBody(CurrentPasswordBody) },
    responses: { 200: jsonContent(successEnvelope(RecoveryCodes), 'The new codes, shown this once.'), ...errorResponses(400, 401, 403, 409, 429) },
  }),
  disable: createRoute({
    method: 'delete',
    path: PATH,
    tags: ['Account'],
    summary: 'Turn two-factor sign-in off',
    description: `${withPassword} The secret and the recovery codes are deleted; the account's address is told. Refused (409) while the person belongs to an organization that requires it.`,
    operationId: 'disableTwoFactor',
    request: { body: jsonBody(CurrentPasswordBody) },
    responses: { 200: jsonContent(successEnvelope(z.object({ enabled: z.literal(false) })), 'Off: the password alone signs in.'), ...errorResponses(400, 401, 403, 409, 429) },
  }),
};

export function registerTwoFactor(app: OpenAPIHono<DashboardEnv>) {
  const givenPassword = (userId: string, currentPassword: string, env: DashboardEnv['Bindings']) =>
    withCurrentPassword(env.DB, userId, currentPassword, env.KEY_ENCRYPTION_KEY, `two-factor-change:${userId}`, TWO_FACTOR_CHANGES_PER_USER);

  app.openapi(routes.state, async (c) => c.json(success(await twoFactorState(c.env.DB, c.get('session').user.id)), 200));

  app.openapi(routes.setup, async (c) => {
    const { user } = c.get('session');
    await givenPassword(user.id, c.req.valid('json').currentPassword, c.env);
    const setup = await beginSetup(c.env, user);
    await clearAttempts(c.env.DB, `two-factor-change:${user.id}`);
    return c.json(success(setup), 200);
  });

  app.openapi(routes.confirm, async (c) => {
    const { user, idHash } = c.get('session');
    await countAttempt(c.env.DB, `two-factor-setup:${user.id}`, TWO_FACTOR_CODES_PER_USER);
    const recoveryCodes = await confirmSetup(c.env, user, c.req.valid('json').code);
    // Every other browser signed in with the password alone: from now on a sign-in takes the code too, theirs included.
    await signOutOtherBrowsers(c.env.DB, user.id, idHash).catch((error: unknown) => {
      // Two-factor is on: its recovery codes must be shown whatever else fails.
      console.error(JSON.stringify({ level: 'error', note: "other browsers not signed out at two-factor's start", userId: user.id, error: String(error) }));
    });
    c.executionCtx.waitUntil(tellTwoFactorChange(c.env, user, 'enabled'));
    return c.json(success({ recoveryCodes }), 200);
  });

  app.openapi(routes.recoveryCodes, async (c) => {
    const { user } = c.get('session');
    await givenPassword(user.id, c.req.valid('json').currentPassword, c.env);
    const recoveryCodes = await replaceRecoveryCodes(c.env, user.id);
    await clearAttempts(c.env.DB, `two-factor-change:${user.id}`);
    c.executionCtx.waitUntil(tellTwoFactorChange(c.env, user, 'codesReplaced'));
    return c.json(success({ recoveryCodes }), 200);
  });

  app.openapi(routes.disable, async (c) => {
    const { user } = c.get('session');
    await givenPassword(user.id, c.req.valid('json').currentPassword, c.env);
    const requiring = (await organizationsRequiringTwoFactor(c.env.DB, user.id)).map((organization) => organization.name);
    if (requiring.length) {
      const one = requiring.length === 1;
      throw ApiError.conflict(
        `${requiring.join(', ')} require${one ? 's' : ''} two-factor sign-in of ${one ? 'its' : 'their'} members: it stays on while you belong to ${one ? 'it' : 'them'}. An owner can stop requiring it, or you can leave first.`,
      );
    }
    const was = await twoFactorState(c.env.DB, user.id);
    await disableTwoFactor(c.env.DB, user.id);
    await clearAttempts(c.env.DB, `two-factor-change:${user.id}`);
    if (was.enabled) c.executionCtx.waitUntil(tellTwoFactorChange(c.env, user, 'disabled'));
    return c.json(success({ enabled: false as const }), 200);
  });
}
