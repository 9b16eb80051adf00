import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { success } from '../../core/envelope';
import { ApiError } from '../../core/errors';
import { errorResponses, jsonContent, successEnvelope } from '../../core/schemas';
import { decoyHash, hashPassword, verifyPassword } from '../auth/passwords';
import { endSession } from '../auth/sessions';
import { signInBrowser } from '../auth/sign-in';
import { tellNewBrowser } from '../signed-in-browsers';
import { clearAttempts, clientAddress, countAttempt } from '../../core/throttle';
import { knownDevice, rememberedForSecondFactor, rememberForSecondFactor } from '../auth/devices';
import { SIGN_IN_PER_EMAIL, SIGN_IN_PER_IP, SIGN_UP_PER_IP } from '../auth/throttle';
import type { DashboardEnv } from '../context';
import { findUserByEmail, signUp, updatePasswordHash, visibleUser } from '../users';
import { sendVerification } from '../email-verification';
import { tellTwoFactorChange, twoFactorSetupId, TWO_FACTOR_CODES_PER_DAY, TWO_FACTOR_CODES_PER_USER } from '../two-factor';
import { checkSecondFactor, countWrongCode, forgetPendingSignIn, pendingSignIn, SECOND_FACTOR_FAILURES, secondFactorAwaited } from '../auth/second-factor';
import { jsonBody, Organization, SecondFactorAwaited, SecondFactorBody, SignInBody, SignUpBody, User, VerificationSent, Workspace } from './schemas';

/** The second step of a sign-in (open: no session yet, the pending sign-in's cookie instead). */
export const SECOND_FACTOR_PATH = '/api/auth/sign-in/two-factor';

const routes = {
  signUp: createRoute({
    method: 'post',
    path: '/api/auth/sign-up',
    tags: ['Session'],
    summary: 'Create an account, its organization and a first workspace, and sign in',
    operationId: 'signUp',
    security: [],
    request: { body: jsonBody(SignUpBody) },
    responses: {
      201: jsonContent(
        successEnvelope(z.object({ user: User, organization: Organization, workspace: Workspace, verification: VerificationSent })),
        'Signed up and signed in; the session cookie is set, and a link to confirm the email address was sent (the free trial waits for it).',
      ),
      ...errorResponses(400, 403, 409, 429),
    },
  }),
  signIn: createRoute({
    method: 'post',
    path: '/api/auth/sign-in',
    tags: ['Session'],
    summary: 'Sign in with email and password',
    operationId: 'signIn',
    security: [],
    description:
      'With two-factor sign-in on, a right password signs nobody in yet: the answer is `twoFactorRequired`, with a cookie for the second step (`POST /api/auth/sign-in/two-factor`, within ten minutes).',
    request: { body: jsonBody(SignInBody) },
    responses: {
      200: jsonContent(successEnvelope(z.union([z.object({ user: User }), SecondFactorAwaited])), 'Signed in, a fresh session cookie set; or the password was right and the second factor is awaited.'),
      ...errorResponses(400, 401, 403, 429),
    },
  }),
  secondFactor: createRoute({
    method: 'post',
    path: SECOND_FACTOR_PATH,
    tags: ['Session'],
    summary: 'Finish a sign-in with the code from the authenticator app, or a recovery code',
    description: `The second step of a sign-in whose password was right (its cookie). A code is taken once. A wrong one is a 400 naming the field; ${SECOND_FACTOR_FAILURES} end the sign-in (401: sign in again), as do ten minutes or a new password. ${TWO_FACTOR_CODES_PER_USER.limit} codes a quarter hour and ${TWO_FACTOR_CODES_PER_DAY.limit} a day per account, a browser that signed in to it before counting apart (429 with Retry-After); a wrong code is told to the account's address, once an hour at most. Using a recovery code spends it, and the account's address is told.`,
    operationId: 'signInSecondFactor',
    security: [],
    request: { body: jsonBody(SecondFactorBody) },
    responses: { 200: jsonContent(successEnvelope(z.object({ user: User })), 'Signed in; a fresh session cookie is set.'), ...errorResponses(400, 401, 403, 429) },
  }),
  signOut: createRoute({
    method: 'post',
    path: '/api/auth/sign-out',
    tags: ['Session'],
    summary: "End this browser's session",
    operationId: 'signOut',
    security: [],
    responses: { 200: jsonContent(successEnvelope(z.object({ signedOut: z.literal(true) })), 'The session is over and its cookie cleared.'), ...errorResponses(403) },
  }),
};

export function registerAuth(app: OpenAPIHono<DashboardEnv>) {
  app.openapi(routes.signUp, async (c) => {
    const input = c.req.valid('json');
    await countAttempt(c.env.DB, `signup-ip:${clientAddress(c.req.raw)}`, SIGN_UP_PER_IP);
    const { passwordHash, ...account } = await signUp(c.env.DB, input, c.env.KEY_ENCRYPTION_KEY);
    await signInBrowser(c, account.user, passwordHash);
    // The free trial waits for the address to be confirmed: the link goes out with the account.
    const verification = await sendVerification(c.env, account.user);
    return c.json(success({ ...account, verification }), 201);
  });

  app.openapi(routes.signIn, async (c) => {
    const { email, password } = c.req.valid('json');
    // Counted before the password is checked, in one upsert: guesses sent at once cannot all read a count under
    // the limit and all be checked (counted after, 30 at once were 30 guesses). A success clears the count.
    // The client address first: one over its limit writes no count for the address it names (one row per email
    // tried, without end, from a client already refused).
    await countAttempt(c.env.DB, `ip:${clientAddress(c.req.raw)}`, SIGN_IN_PER_IP);
    const user = await findUserByEmail(c.env.DB, email);
    // A browser that signed in to this account since its password was last set has a count of its own
    // (devices.ts): guesses from elsewhere cannot keep the address's owner out.
    const device = user ? await knownDevice(c, user) : null;
    const emailBucket = device ? `email-device:${email}:${device}` : `email:${email}`;
    await countAttempt(c.env.DB, emailBucket, SIGN_IN_PER_EMAIL);

    // An unknown address costs the same hashing as a wrong password and gets the same answer.
    const verification = await verifyPassword(password, user?.passwordHash ?? (await decoyHash(c.env.KEY_ENCRYPTION_KEY)), c.env.KEY_ENCRYPTION_KEY);
    if (!user || !verification.ok) throw ApiError.unauthorized('Wrong email address or password.');
    // Rehashed and signed in only over the hash just verified: a reset or change that landed meanwhile wins, and this
    // sign-in, made with the password it replaced, is refused like any wrong one.
    let current = user.passwordHash;
    if (verification.needsRehash) {
      const rehashed = await hashPassword(password, c.env.KEY_ENCRYPTION_KEY);
      if (await updatePasswordHash(c.env.DB, user.id, rehashed, current)) current = rehashed;
    }
    // The password was right: its guesses are over, whether or not a second factor is asked for now.
    await clearAttempts(c.env.DB, emailBucket);
    const setupId = await twoFactorSetupId(c.env.DB, user.id);
    // A browser remembered at an earlier second step (30 days) takes the password alone.
    if (setupId !== null && !(await rememberedForSecondFactor(c, user, setupId))) {
      return c.json(success(await secondFactorAwaited(c, { id: user.id, passwordHash: current }, device)), 200);
    }
    if (!(await signInBrowser(c, user, current, device))) throw ApiError.unauthorized('Wrong email address or password.');
    if (!device) c.executionCtx.waitUntil(tellNewBrowser(c.env, user, c.req.header('user-agent')));
    return c.json(success({ user: visibleUser(user) }), 200);
  });

  app.openapi(routes.secondFactor, async (c) => {
    const body = c.req.valid('json');
    const pending = await pendingSignIn(c);
    if (!pending) throw ApiError.unauthorized('Sign in again: this sign-in has ended (after ten minutes, five wrong codes or a new password).');
    const { user } = pending;
    let used: 'code' | 'recoveryCode';
    try {
      used = await checkSecondFactor(c, user, body.recoveryCode === undefined ? { code: body.code ?? '' } : { recoveryCode: body.recoveryCode }, pending.device);
    } catch (error) {
      if (error instanceof ApiError && error.code === 'VALIDATION_ERROR' && !(await countWrongCode(c.env.DB, pending))) {
        await forgetPendingSignIn(c);
        throw ApiError.unauthorized(`Sign in again: ${SECOND_FACTOR_FAILURES} wrong codes ended this sign-in.`);
      }
      throw error;
    }
    await forgetPendingSignIn(c);
    if (!(await signInBrowser(c, user, user.passwordHash, pending.device))) throw ApiError.unauthorized('Sign in again: the password was changed meanwhile.');
    if (body.rememberBrowser) {
      const setupId = await twoFactorSetupId(c.env.DB, user.id);
      if (setupId !== null) await rememberForSecondFactor(c, user, setupId);
    }
    if (used === 'recoveryCode') c.executionCtx.waitUntil(tellTwoFactorChange(c.env, user, 'recoveryCodeUsed'));
    if (!pending.device) c.executionCtx.waitUntil(tellNewBrowser(c.env, user, c.req.header('user-agent')));
    return c.json(success({ user: visibleUser(user) }), 200);
  });

  app.openapi(routes.signOut, async (c) => {
    await endSession(c);
    await forgetPendingSignIn(c);
    return c.json(success({ signedOut: true as const }), 200);
  });
}
