import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { errorResponses, jsonContent, successEnvelope } from '../../core/schemas';
import { success } from '../../core/envelope';
import type { DashboardEnv } from '../context';
import { membershipsOf } from '../members';
import { Membership, User } from './schemas';

const route = createRoute({
  method: 'get',
  path: '/api/me',
  tags: ['Session'],
  summary: 'The signed-in user, the organizations they belong to (with their role) and their workspaces',
  operationId: 'getMe',
  responses: { 200: jsonContent(successEnvelope(z.object({ user: User, organizations: z.array(Membership) })), 'Who is signed in.'), ...errorResponses(401) },
});

export function registerMe(app: OpenAPIHono<DashboardEnv>) {
  app.openapi(route, async (c) => {
    const { user } = c.get('session');
    return c.json(success({ user, organizations: await membershipsOf(c.env.DB, user.id) }), 200);
  });
}
