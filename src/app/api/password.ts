import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { success } from '../../core/envelope';
import { errorResponses, jsonContent, successEnvelope } from '../../core/schemas';
import { clientAddress } from '../../core/throttle';
import { knownDevice, rememberDevice } from '../auth/devices';
import { startSession } from '../auth/sessions';
import type { DashboardEnv, SessionUser } from '../context';
import { changePassword, requestPasswordReset, resetPassword } from '../password-changes';
import { ChangePasswordBody, jsonBody, PasswordResetBody, PasswordResetRequestBody, User } from './schemas';

/** The routes a person reaches without a session: asking for a reset link, and using it. */
export const PASSWORD_RESET_PATHS = ['/api/auth/password-reset', '/api/auth/password-reset/confirm'] as const;

const routes = {
  requestReset: createRoute({
    method: 'post',
    path: PASSWORD_RESET_PATHS[0],
    tags: ['Session'],
    summary: 'Email a link that sets a new password',
    description:
      'Answered the same whether or not an account uses the address, so it does not tell which do; the link, when there is an account, works for an hour, once, and replaces any sent before. At most 3 an hour for one address and 10 an hour from one client (429 with Retry-After).',
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
    description: "Spends the link. Every session of the account ends; this browser's starts afresh. The address counts as confirmed, since the link reached it.",
    operationId: 'resetPassword',
    security: [],
    request: { body: jsonBody(PasswordResetBody) },
    responses: { 200: jsonContent(successEnvelope(z.object({ user: User })), 'The password is set and a fresh session cookie is set.'), ...errorResponses(400, 403) },
  }),
  change: createRoute({
    method: 'post',
    path: '/api/me/password',
    tags: ['Session'],
    summary: 'Change the password, giving the current one',
    description:
      "Every session of the account ends, this browser's starting afresh, and the account's address is told of the change. A wrong current password is a 400 naming `currentPassword`; five tries a quarter hour (429 with Retry-After).",
    operationId: 'changePassword',
    request: { body: jsonBody(ChangePasswordBody) },
    responses: { 200: jsonContent(successEnvelope(z.object({ user: User })), 'Changed; a fresh session cookie is set.'), ...errorResponses(400, 401, 403, 429) },
  }),
};

/**
 * A new password means a new session for this browser (the others ended with the change) and its known-device cookie
 * signed again over the new password's moment, keeping its id when it had one.
 */
async function signInAfresh(c: Context<DashboardEnv>, user: SessionUser, device: string | null): Promise<void> {
  await startSession(c, user.id);
  await rememberDevice(c, user, device ?? undefined);
}

export function registerPassword(app: OpenAPIHono<DashboardEnv>) {
  app.openapi(routes.requestReset, async (c) => {
    const { email } = c.req.valid('json');
    const emailed = await requestPasswordReset(c.env, email, clientAddress(c.req.raw), (work) => c.executionCtx.waitUntil(work));
    return c.json(success({ emailed }), 202);
  });

  app.openapi(routes.reset, async (c) => {
    const { token, password } = c.req.valid('json');
    const user = await resetPassword(c.env, token, password);
    await signInAfresh(c, user, null);
    return c.json(success({ user }), 200);
  });

  app.openapi(routes.change, async (c) => {
    const { user: before } = c.get('session');
    const { currentPassword, newPassword } = c.req.valid('json');
    const device = await knownDevice(c, before);
    const user = await changePassword(c.env, before, currentPassword, newPassword, (work) => c.executionCtx.waitUntil(work));
    await signInAfresh(c, user, device);
    return c.json(success({ user }), 200);
  });
}
