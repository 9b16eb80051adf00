import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { errorResponses, jsonContent, successEnvelope } from '../../core/schemas';
import { success } from '../../core/envelope';
import type { DashboardEnv } from '../context';
import { membershipsOf } from '../members';
import { ApiError } from '../../core/errors';
import { sendVerification } from '../email-verification';
import { requestEmailChange } from '../email-changes';
import { deleteAccount } from '../account-deletion';
import { signedInBrowsers, signOutBrowser, signOutOtherBrowsers } from '../signed-in-browsers';
import { endSession } from '../auth/sessions';
import { ChangeEmailBody, DeleteAccountBody, jsonBody, Membership, User, VerificationSent } from './schemas';

const OrganizationGone = z.object({ id: z.string(), name: z.string() });
const SignedInBrowser = z
  .object({
    id: z.string().openapi({ description: 'Names the session here; it signs nobody in.' }),
    browser: z.string().openapi({ description: 'The browser and system it began in, as its User-Agent said ("Firefox on macOS").', example: 'Firefox on macOS' }),
    signedInAt: z.string(),
    lastSeenAt: z.string().nullable().openapi({ description: 'When it was last used, to the hour.' }),
    current: z.boolean().openapi({ description: 'The browser asking.' }),
  })
  .openapi('SignedInBrowser');
const sessionIdParam = z.object({ sessionId: z.string().regex(/^[0-9a-f]{16}$/, 'Expected the id of a signed-in browser.').openapi({ param: { name: 'sessionId', in: 'path' } }) });

const routes = {
  me: createRoute({
    method: 'get',
    path: '/api/me',
    tags: ['Session'],
    summary: 'The signed-in user, the organizations they belong to (with their role) and their workspaces',
    operationId: 'getMe',
    responses: { 200: jsonContent(successEnvelope(z.object({ user: User, organizations: z.array(Membership) })), 'Who is signed in.'), ...errorResponses(401) },
  }),
  browsers: createRoute({
    method: 'get',
    path: '/api/me/sessions',
    tags: ['Session'],
    summary: 'The browsers signed in to your account, the one asking marked',
    operationId: 'listSignedInBrowsers',
    responses: { 200: jsonContent(successEnvelope(z.object({ sessions: z.array(SignedInBrowser) })), 'Newest use first.'), ...errorResponses(401) },
  }),
  signOutBrowser: createRoute({
    method: 'delete',
    path: '/api/me/sessions/{sessionId}',
    tags: ['Session'],
    summary: 'Sign out one of your browsers (its next request is signed out); 404 for one that is not yours',
    operationId: 'signOutBrowser',
    request: { params: sessionIdParam },
    responses: { 200: jsonContent(successEnvelope(z.object({ signedOut: z.literal(true) })), 'Signed out.'), ...errorResponses(400, 401, 403, 404) },
  }),
  signOutOthers: createRoute({
    method: 'post',
    path: '/api/me/sessions/sign-out-others',
    tags: ['Session'],
    summary: 'Sign out every browser of yours but this one',
    operationId: 'signOutOtherBrowsers',
    responses: { 200: jsonContent(successEnvelope(z.object({ signedOut: z.number().int() })), 'How many were signed out.'), ...errorResponses(401, 403) },
  }),
  deleteAccount: createRoute({
    method: 'delete',
    path: '/api/me',
    tags: ['Session'],
    summary: 'Delete your account, giving its password',
    description:
      "An organization with other members goes on without you (your MCP tokens, sandbox keys and OAuth grants there end; the API keys you made keep working); the last owner of one is refused with 409 until someone else is owner or the others are removed. An organization you alone belong to closes: its Stripe subscription is cancelled first (503, with nothing deleted, when that fails), then its workspaces are deleted and its plan ended; its usage stays on its bill, and bought credit is not refunded. Your address and name are erased, every session ends, and the address is told. A wrong password is a 400 naming `currentPassword`; five tries a quarter hour (429 with Retry-After).",
    operationId: 'deleteAccount',
    request: { body: jsonBody(DeleteAccountBody) },
    responses: {
      200: jsonContent(
        successEnvelope(
          z.object({
            deleted: z.literal(true),
            closed: z.array(OrganizationGone).openapi({ description: 'Organizations closed with the account: you were their only member.' }),
            left: z.array(OrganizationGone).openapi({ description: 'Organizations that go on without you.' }),
          }),
        ),
        'Deleted; the session cookie is cleared.',
      ),
      ...errorResponses(400, 401, 403, 409, 429, 503),
    },
  }),
  changeEmail: createRoute({
    method: 'post',
    path: '/api/me/email',
    tags: ['Session'],
    summary: 'Change the email address you sign in with: a link goes to the new address, and the change waits for it',
    description:
      'Needs the current password (a wrong one is a 400 naming `currentPassword`). The link works for 24 hours, once, and replaces one sent before; the old address is told once the change is made. 409 when another account uses the address. At most five an hour (429 with Retry-After).',
    operationId: 'changeEmail',
    request: { body: jsonBody(ChangeEmailBody) },
    responses: { 200: jsonContent(successEnvelope(VerificationSent), 'The link was sent to the new address, or kept in the development outbox.'), ...errorResponses(400, 401, 403, 409, 429) },
  }),
  sendVerification: createRoute({
    method: 'post',
    path: '/api/me/email-verification',
    tags: ['Session'],
    summary: 'Send a new link that confirms the email address (the free trial waits for it)',
    description: 'Replaces the link sent before. At most five an hour (429 with Retry-After past that); 409 when the address is confirmed already.',
    operationId: 'sendEmailVerification',
    responses: { 200: jsonContent(successEnvelope(VerificationSent), 'The link was sent, or kept in the development outbox.'), ...errorResponses(401, 403, 409, 429) },
  }),
};

export function registerMe(app: OpenAPIHono<DashboardEnv>) {
  app.openapi(routes.me, async (c) => {
    const { user } = c.get('session');
    return c.json(success({ user, organizations: await membershipsOf(c.env.DB, user.id) }), 200);
  });

  app.openapi(routes.browsers, async (c) => {
    const { user, idHash } = c.get('session');
    return c.json(success({ sessions: await signedInBrowsers(c.env.DB, user.id, idHash) }), 200);
  });

  app.openapi(routes.signOutBrowser, async (c) => {
    await signOutBrowser(c.env.DB, c.get('session').user.id, c.req.valid('param').sessionId);
    return c.json(success({ signedOut: true as const }), 200);
  });

  app.openapi(routes.signOutOthers, async (c) => {
    const { user, idHash } = c.get('session');
    return c.json(success({ signedOut: await signOutOtherBrowsers(c.env.DB, user.id, idHash) }), 200);
  });

  app.openapi(routes.deleteAccount, async (c) => {
    const { currentPassword } = c.req.valid('json');
    const deleted = await deleteAccount(c.env, c.get('session').user, currentPassword, (work) => c.executionCtx.waitUntil(work));
    await endSession(c);
    return c.json(success({ deleted: true as const, ...deleted }), 200);
  });

  app.openapi(routes.changeEmail, async (c) => {
    const { email, currentPassword } = c.req.valid('json');
    return c.json(success(await requestEmailChange(c.env, c.get('session').user, email, currentPassword)), 200);
  });

  app.openapi(routes.sendVerification, async (c) => {
    const { user } = c.get('session');
    if (user.emailVerifiedAt) throw ApiError.conflict(`${user.email} is confirmed already (${user.emailVerifiedAt.slice(0, 10)}).`);
    return c.json(success(await sendVerification(c.env, user)), 200);
  });
}
