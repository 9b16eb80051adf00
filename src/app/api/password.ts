import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { success } from '../../core/envelope';
import { errorResponses, jsonContent, successEnvelope } from '../../core/schemas';
import { clientAddress } from '../../core/throttle';
import { knownDevice } from '../auth/devices';
import { signInBrowser } from '../auth/sign-in';
import type { DashboardEnv } from '../context';
import { changePassword, passwordChangedMeanwhile, type PasswordSet, requestPasswordReset, resetPassword } from '../password-changes';
import { ChangePasswordBody, jsonBody, PasswordResetBody, PasswordResetRequestBody, User } from './schemas';
import { secondFactorOfReset } from '../auth/second-factor';

/** The routes a person reaches without a session: asking for a reset link, and using it. */
export const PASSWORD_RESET_PATHS = ['/api/auth/password-reset', '/api/auth/password-reset/confirm'] as const;

const routes = {
  requestReset: createRoute({
    method: 'post',
    path: PASSWORD_RESET_PATHS[0],
    tags: ['Session'],
    summary: 'Email a link that sets a new password',
    description:
      "Answered the same whether or not an account uses the address, so it does not tell which do; the link, when there is an account, works for an hour, once, beside the account's last two unexpired ones, and any new password voids them all. At most 3 an hour for one address (a browser that signed in to the account has 3 of its own) and 10 an hour from one client (429 with Retry-After).",
    operationId: 'requestPasswordReset',
    security: [],
    request: { body: jsonBody(PasswordResetRequestBody) },
    responses: {
      202: jsonContent(
        successEnvelope(z.object({ emailed: z.enum(['provider', 'outbox', 'nowhere']).openapi({ description: "Where this installation's emails go: an email provider, the development outbox (/dev/outbox), or nowhere (no provider set up)." }) })),
        'Accepted: if an account uses the address, a link is on its way.',
      ),
      ...errorResponses(400, 403, 429),
    },
  }),
  reset: createRoute({
    method: 'post',
    path: PASSWORD_RESET_PATHS[1],
    tags: ['Session'],
    summary: 'Set a new password with the link from a reset email, and sign in',
    description:
      "Spends the link. An account with two-factor sign-in also sends `code`: the app's six digits or a recovery code (without it, or wrong, a 400 naming `code`, and the link is not spent; 10 codes a quarter hour). Every session of the account ends; this browser's starts afresh. The address counts as confirmed, since the link reached it; if it was not confirmed before, every key, MCP token and OAuth grant the account made is revoked (someone else may have signed up with the address). 409 when the password was set again meanwhile.",
    operationId: 'resetPassword',
    security: [],
    request: { body: jsonBody(PasswordResetBody) },
    responses: { 200: jsonContent(successEnvelope(z.object({ user: User })), 'The password is set and a fresh session cookie is set.'), ...errorResponses(400, 403, 409, 429) },
  }),
  change: createRoute({
    method: 'post',
    path: '/api/me/password',
    tags: ['Session'],
    summary: 'Change the password, giving the current one',
    description:
      "Every session of the account ends, this browser's starting afresh, and the account's address is told of the change. A wrong current password is a 400 naming `currentPassword`; five tries a quarter hour (429 with Retry-After); 409 when the password was set elsewhere meanwhile.",
    operationId: 'changePassword',
    request: { body: jsonBody(ChangePasswordBody) },
    responses: { 200: jsonContent(successEnvelope(z.object({ user: User })), 'Changed; a fresh session cookie is set.'), ...errorResponses(400, 401, 403, 409, 429) },
  }),
};

/** A new password means a new session for this browser under it (the others ended with the change), and its device cookie signed again. */
async function signInAfresh(c: Context<DashboardEnv>, { user, passwordHash }: PasswordSet, device: string | null): Promise<void> {
  if (!(await signInBrowser(c, user, passwordHash, device))) throw passwordChangedMeanwhile();
}

export function registerPassword(app: OpenAPIHono<DashboardEnv>) {
  app.openapi(routes.requestReset, async (c) => {
    const { email } = c.req.valid('json');
    const emailed = await requestPasswordReset(c.env, { email, client: clientAddress(c.req.raw), deviceOf: (user) => knownDevice(c, user) }, (work) => c.executionCtx.waitUntil(work));
    return c.json(success({ emailed }), 202);
  });

  app.openapi(routes.reset, async (c) => {
    const { token, password, code } = c.req.valid('json');
    // The emailed link stands in for the password, not for the second factor: an account with one gives its code
    // (or a recovery code) in the same form, checked before the link is spent or the password set.
    const set = await resetPassword(c.env, token, password, (userId) => secondFactorOfReset(c, userId, code));
    await signInAfresh(c, set, null);
    return c.json(success({ user: set.user }), 200);
  });

  app.openapi(routes.change, async (c) => {
    const { user: before } = c.get('session');
    const { currentPassword, newPassword } = c.req.valid('json');
    const device = await knownDevice(c, before);
    const set = await changePassword(c.env, before, currentPassword, newPassword, (work) => c.executionCtx.waitUntil(work));
    await signInAfresh(c, set, device);
    return c.json(success({ user: set.user }), 200);
  });
}
