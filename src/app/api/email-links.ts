import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { success } from '../../core/envelope';
import { errorResponses, jsonContent, successEnvelope } from '../../core/schemas';
import type { DashboardEnv } from '../context';
import { confirmEmailChange, tellOldAddress } from '../email-changes';
import { confirmEmail } from '../email-verification';
import { jsonBody } from './schemas';

/**
 * What an emailed link does, done by the button of the page it opens, not by opening it: mail scanners open every
 * link of a message they receive (Safe Links and its kind), and one that confirmed by being opened would confirm an
 * address for whoever signed up with it, or move an account to a mistyped address, with nobody there having read it.
 * No session is needed: the link is the proof.
 */
export const EMAIL_LINK_PATHS = ['/api/auth/email-confirmation', '/api/auth/email-change/confirm'] as const;

const LinkBody = z.object({ token: z.string().regex(/^[0-9a-f]{64}$/, "The token of the emailed link (64 hexadecimal digits).") }).strict().openapi('EmailLinkBody');

const routes = {
  confirmEmail: createRoute({
    method: 'post',
    path: EMAIL_LINK_PATHS[0],
    tags: ['Session'],
    summary: 'Confirm an email address with the link sent to it',
    description: 'Spends the link; a link used, replaced, past its day, or for an address the account no longer has is a 400 naming `token`.',
    operationId: 'confirmEmailAddress',
    security: [],
    request: { body: jsonBody(LinkBody) },
    responses: { 200: jsonContent(successEnvelope(z.object({ email: z.string() })), 'The address is confirmed.'), ...errorResponses(400, 403) },
  }),
  confirmChange: createRoute({
    method: 'post',
    path: EMAIL_LINK_PATHS[1],
    tags: ['Session'],
    summary: 'Move an account to the address a change link was sent to',
    description:
      'Spends the link: the account signs in with the new address from now on, counted as confirmed, and the old address is told. A link used, replaced, past its day, or voided by a new password is a 400 naming `token`; 409 when another account took the address meanwhile.',
    operationId: 'confirmEmailChange',
    security: [],
    request: { body: jsonBody(LinkBody) },
    responses: { 200: jsonContent(successEnvelope(z.object({ email: z.string() })), 'The account moved to the new address.'), ...errorResponses(400, 403, 409) },
  }),
};

export function registerEmailLinks(app: OpenAPIHono<DashboardEnv>) {
  app.openapi(routes.confirmEmail, async (c) => c.json(success({ email: (await confirmEmail(c.env.DB, c.req.valid('json').token)).email }), 200));

  app.openapi(routes.confirmChange, async (c) => {
    const change = await confirmEmailChange(c.env.DB, c.req.valid('json').token);
    c.executionCtx.waitUntil(tellOldAddress(c.env, change));
    return c.json(success({ email: change.newEmail }), 200);
  });
}
