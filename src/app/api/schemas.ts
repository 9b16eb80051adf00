import { z } from '@hono/zod-openapi';
import { emailAddress, keyDays, MAX_KEY_DAYS } from '../../core/schemas';
import { humanName } from '../../core/human-name';
import { PLANS } from '../../core/plans';
import { ROLES } from '../members';
import { APP_CODE } from '../two-factor';

export const User = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string(),
    createdAt: z.string(),
    emailVerifiedAt: z.string().nullable().openapi({ description: 'When the email address was confirmed by the link sent to it; null: not yet, and the free trial waits for it.' }),
    passwordChangedAt: z.string().nullable().openapi({ description: 'When the password was last changed or reset; null: it is the one set at sign-up.' }),
  })
  .openapi('User');

/** Where an email the dashboard owed someone went (src/app/email.ts). */
export const Emailed = z.enum(['provider', 'outbox', 'nowhere']);

export const VerificationSent = z
  .object({
    sentTo: z.string(),
    emailed: Emailed.openapi({ description: 'Where the confirmation email went: the email provider, the development outbox (/dev/outbox), or nowhere (no provider configured, or it failed: send it again).' }),
  })
  .openapi('VerificationSent');

export const Workspace = z.object({ id: z.string(), organizationId: z.string(), name: z.string(), createdAt: z.string() }).openapi('Workspace');

export const Organization = z
  .object({
    id: z.string(),
    name: z.string(),
    plan: z.enum(PLANS).nullable().openapi({ description: 'null: no plan yet; metered calls answer 402 SUBSCRIPTION_REQUIRED.' }),
    rpmOverride: z.number().int().nullable(),
    createdAt: z.string(),
  })
  .openapi('Organization');

export const Membership = z
  .object({
    id: z.string(),
    name: z.string(),
    plan: z.enum(PLANS).nullable(),
    role: z.enum(ROLES),
    twoFactorRequired: z.boolean().openapi({
      description: 'true: the organization requires two-factor sign-in and this person has not turned it on, so its workspaces answer 403 until they do (POST /api/me/two-factor/setup, then /confirm).',
    }),
    workspaces: z.array(Workspace),
  })
  .openapi('Membership');

export const Key = z
  .object({
    id: z.string(),
    workspaceId: z.string(),
    scope: z.enum(['workspace', 'workspace_mcp']),
    name: z.string(),
    hint: z.string().openapi({ description: 'The prefix and the last four characters, safe to show.' }),
    createdAt: z.string(),
    createdBy: z.string().nullable().openapi({ description: 'The user who made it; null when the operator API did.' }),
    lastUsedAt: z.string().nullable(),
    revokedAt: z.string().nullable(),
    monthlyLimitCents: z.number().nullable().openapi({ description: "The most the key may spend in a calendar month (UTC), in cents; null: no limit of its own." }),
    expiresAt: z.string().nullable().openapi({ description: 'When the key stops working by itself (401 from then on); null: never.' }),
  })
  .openapi('Key');

export const KeyWithSpend = Key.extend({
  spentThisMonthCents: z.number().openapi({ description: 'What the key spent this calendar month (UTC), in cents.' }),
  inFlightCents: z.number().openapi({ description: 'What its calls in flight hold now; counted against the limit too.' }),
  monthEndsAt: z.string().openapi({ description: "When this month's spend starts again from zero (ISO 8601)." }),
}).openapi('KeyWithSpend');

export const KeyWithSecret = Key.extend({ key: z.string().openapi({ description: 'The whole secret. Store it now; keys can be revealed again, MCP tokens cannot.' }) }).openapi(
  'KeyWithSecret',
);

const password = z.string().min(10, 'At least 10 characters.').max(128, 'At most 128 characters.');
export const name = humanName(100);

export const SignUpBody = z.strictObject({ email: emailAddress, password, name }).openapi('SignUp');
const givenPassword = z.string().min(1, 'Required.').max(128);
export const SignInBody = z.strictObject({ email: emailAddress, password: givenPassword }).openapi('SignIn');
export const PasswordResetRequestBody = z.strictObject({ email: emailAddress }).openapi('PasswordResetRequest');
export const PasswordResetBody = z
  .strictObject({
    token: z.string().regex(/^[0-9a-f]{64}$/, "Not a reset link's token: open the link from the email again.").openapi({ description: 'The token of the link in the reset email.' }),
    password,
    code: z
      .string()
      .trim()
      .max(40)
      .optional()
      .openapi({ description: 'With two-factor sign-in on: the six digits the authenticator app shows, or one of the recovery codes.', example: '492039' }),
  })
  .openapi('PasswordReset');
export const ChangePasswordBody = z.strictObject({ currentPassword: givenPassword, newPassword: password }).openapi('ChangePassword');
export const DeleteAccountBody = z.strictObject({ currentPassword: givenPassword }).openapi('DeleteAccount');
export const ChangeEmailBody = z.strictObject({ email: emailAddress, currentPassword: givenPassword }).openapi('ChangeEmail');
export const CurrentPasswordBody = z.strictObject({ currentPassword: givenPassword }).openapi('CurrentPassword');

const appCode = z.string().trim().regex(APP_CODE, 'The six digits your authenticator app shows.').openapi({ description: 'The six digits the authenticator app shows now.', example: '492039' });
export const TwoFactorCodeBody = z.strictObject({ code: appCode }).openapi('TwoFactorCode');
/** The second step of a sign-in: the app's code, or one of the recovery codes instead (one of the two). */
export const SecondFactorBody = z
  .strictObject({
    code: appCode.optional(),
    recoveryCode: z.string().trim().min(1, 'Required.').max(40).optional().openapi({ description: 'One of the recovery codes shown when two-factor sign-in was turned on, instead of `code`.', example: 'k3xq7-2mzpa' }),
    rememberBrowser: z
      // The sign-in page's checkbox sends "true".
      .preprocess((value) => (value === 'true' ? true : value), z.boolean('true or false.'))
      .optional()
      .openapi({
        type: 'boolean',
        description: "This browser's sign-ins take the password alone for 30 days (a cookie); a new password or new recovery codes forget every browser remembered.",
      }),
  })
  .superRefine((body, context) => {
    if ((body.code === undefined) === (body.recoveryCode === undefined)) context.addIssue({ code: 'custom', path: ['code'], message: 'Send the code from your app, or a recovery code: one of the two.' });
  })
  .openapi('SecondFactor');

/** A sign-in that waits for its second factor: no session yet; the code goes to POST /api/auth/sign-in/two-factor. */
export const SecondFactorAwaited = z
  .object({
    twoFactorRequired: z.literal(true),
    expiresAt: z.string().openapi({ description: 'Until when the code is awaited (ten minutes, five wrong codes); then sign in again.' }),
  })
  .openapi('SecondFactorAwaited');

export const TwoFactorState = z
  .object({
    enabled: z.boolean(),
    enabledAt: z.string().nullable(),
    recoveryCodesLeft: z.number().int().openapi({ description: 'Recovery codes not used yet (of 10).' }),
  })
  .openapi('TwoFactorState');
export const TwoFactorSetup = z
  .object({
    secret: z.string().openapi({ description: 'The secret in base32, to type into an app that cannot read the QR code.' }),
    uri: z.string().openapi({ description: 'The otpauth:// link the QR code encodes.' }),
    qrSvg: z.string().openapi({ description: 'The QR code, as an SVG document.' }),
  })
  .openapi('TwoFactorSetup');
export const RecoveryCodes = z
  .object({ recoveryCodes: z.array(z.string()).openapi({ description: 'Ten one-time codes, shown this once: each signs in once in place of the app.' }) })
  .openapi('RecoveryCodes');

export const workspaceIdParam = z.object({
  workspaceId: z.string().regex(/^ws_[0-9a-f]{24}$/, 'Expected a workspace id (ws_ and 24 hex characters).').openapi({ param: { name: 'workspaceId', in: 'path' } }),
});
export const organizationIdParam = z.object({
  organizationId: z.string().regex(/^org_[0-9a-f]{24}$/, 'Expected an organization id (org_ and 24 hex characters).').openapi({ param: { name: 'organizationId', in: 'path' } }),
});
export const keyIdParam = workspaceIdParam.extend({
  keyId: z.string().regex(/^key_[0-9a-f]{24}$/, 'Expected a key id (key_ and 24 hex characters).').openapi({ param: { name: 'keyId', in: 'path' } }),
});
export const tokenIdParam = workspaceIdParam.extend({
  tokenId: z.string().regex(/^key_[0-9a-f]{24}$/, 'Expected a token id (key_ and 24 hex characters).').openapi({ param: { name: 'tokenId', in: 'path' } }),
});

export const NameBody = z.strictObject({ name });

/**
 * A key's monthly spend limit in whole cents, or null for none. A dashboard form sends its fields as
 * text, so a numeric string is read as its number and an empty field as no limit.
 */
const monthlyLimitCents = z.preprocess(
  (value) => (typeof value === 'string' ? (value.trim() === '' ? null : Number(value)) : value),
  z.number('A whole number of cents.').int('A whole number of cents.').min(0, 'At least 0.').max(100_000_000, 'At most 100000000 (one million dollars).').nullable(),
);

export const NewKeyBody = z.strictObject({
  name,
  monthlyLimitCents: monthlyLimitCents.optional(),
  expiresInDays: keyDays
    .optional()
    .openapi({ description: `Days the key works for (1 to ${MAX_KEY_DAYS}), from now; then it is refused with 401. Left out: it works until revoked.`, example: 90 }),
});
export const KeyLimitBody = z.strictObject({ monthlyLimitCents });
export const NewTokenBody = z.strictObject({
  name,
  expiresInDays: keyDays
    .optional()
    .openapi({ description: `Days the token works for (1 to ${MAX_KEY_DAYS}), from now; then /mcp refuses it with 401. Left out: it works until revoked.`, example: 30 }),
});
export const KeyExpiryBody = z.strictObject({
  expiresInDays: keyDays
    .nullable()
    .openapi({ description: `Days from now the key works for (1 to ${MAX_KEY_DAYS}), longer or shorter than before; null: until revoked.`, example: 90 }),
});

export const jsonBody = <T extends z.ZodType>(schema: T) => ({ content: { 'application/json': { schema } }, required: true });
