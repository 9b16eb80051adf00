import type { FC } from 'hono/jsx';
import type { Delivery } from '../../services/email';
import { deliveryRoute } from '../../services/email';
import { INVALID_RESET_LINK, resetLinkFor } from '../password-changes';
import { isTwoFactorEnabled } from '../two-factor';
import { CardPage, Field, OutcomePage } from './layout';
import { emailLinkToken, sitePage } from './page';

/** What the forgot-password page says of where its link goes: the installation's, the same for every address. */
const WhereLinksGo: FC<{ emailed: Delivery['sent'] }> = ({ emailed }) =>
  emailed === 'outbox' ? (
    <p class="notice info small">
      This installation keeps its emails in the <a href="/dev/outbox">development outbox</a>.
    </p>
  ) : emailed === 'nowhere' ? (
    <p class="notice warn small">This installation has no email provider (RESEND_API_KEY), so no link can be sent: ask whoever runs it.</p>
  ) : null;

type ForgotProps = { sent: boolean; emailed: Delivery['sent'] };

const ForgotPasswordPage: FC<ForgotProps> = ({ sent, emailed }) => (
  <CardPage title={sent ? 'Check your email' : 'Forgot your password?'}>
    <div class="card">
      {sent ? (
        <>
          <h1>Check your email</h1>
          <p class="lede">If an account uses that address, a link to set a new password is on its way. It works for an hour, once.</p>
          <WhereLinksGo emailed={emailed} />
        </>
      ) : (
        <>
          <h1>Forgot your password?</h1>
          <p class="lede">We will email you a link to set a new one.</p>
          <WhereLinksGo emailed={emailed} />
          <form class="stack" data-api="/api/auth/password-reset" data-then="go:/forgot-password?sent=1" novalidate>
            <p class="form-error" role="alert"></p>
            <Field name="email" label="Email" type="email" autocomplete="username" />
            <button type="submit">Email me a link</button>
          </form>
        </>
      )}
    </div>
    <p class="auth-foot">
      Remembered it? <a href="/signin">Sign in</a>
    </p>
  </CardPage>
);

export const forgotPasswordPage = sitePage({
  path: '/forgot-password',
  load: async (c): Promise<ForgotProps> => ({ sent: c.req.query('sent') === '1', emailed: deliveryRoute(c.env) }),
  view: ForgotPasswordPage,
});

type ResetProps = { token: string; email: string; twoFactor: boolean } | { refused: string };

const ResetPasswordPage: FC<ResetProps> = (props) =>
  'refused' in props ? (
    <OutcomePage title="Reset link not valid" heading="This link does not set a password" lede={props.refused} next={{ href: '/forgot-password', label: 'Ask for a new link' }} />
  ) : (
    <CardPage title="Set a new password">
      <div class="card">
        <h1>Set a new password</h1>
        <p class="lede">
          For <strong>{props.email}</strong>. Every browser signed in to the account will be signed out.
        </p>
        <form class="stack" data-api="/api/auth/password-reset/confirm" data-then="go:/" novalidate>
          <p class="form-error" role="alert"></p>
          <input type="hidden" name="token" value={props.token} />
          {/* For password managers: whose password this is. Not sent (no name). */}
          <input type="hidden" autocomplete="username" value={props.email} />
          <Field name="password" label="New password" type="password" autocomplete="new-password" minlength={10} hint="At least 10 characters." />
          {/* The link stands in for the password, not for the second factor: that is asked here too. */}
          {props.twoFactor ? (
            <Field name="code" label="Two-factor code" autocomplete="one-time-code" maxlength={40} hint="The six digits your authenticator app shows, or one of your recovery codes." />
          ) : null}
          <button type="submit">Set password and sign in</button>
        </form>
      </div>
    </CardPage>
  );

/**
 * Where a reset email's link lands. Opening it spends nothing (a mail scanner that follows links must not use them
 * up); the form spends it. The token is in this page's address, so the page sends no Referer at all.
 */
export const resetPasswordPage = sitePage({
  path: '/reset-password',
  load: async (c): Promise<ResetProps> => {
    const token = emailLinkToken(c);
    const link = token ? await resetLinkFor(c.env.DB, token) : null;
    return token && link ? { token, email: link.email, twoFactor: await isTwoFactorEnabled(c.env.DB, link.userId) } : { refused: INVALID_RESET_LINK };
  },
  view: ResetPasswordPage,
  status: (props) => ('refused' in props ? 404 : 200),
});
