import type { FC } from 'hono/jsx';
import { confirmationLinkFor, INVALID_CONFIRMATION_LINK } from '../email-verification';
import { CardPage, OutcomePage } from './layout';
import { sitePage } from './page';

type Props = { asked: { token: string; email: string } } | { confirmed: true } | { refused: string };

/**
 * Where a confirmation email's link lands. Opening it spends nothing (mail scanners open every link of a message);
 * its button confirms the address (api/email-links.ts), then comes back here to say so.
 */
export const VerifyEmailPage: FC<Props> = (props) =>
  'asked' in props ? (
    <CardPage title="Confirm your email address">
      <div class="card">
        <h1>Confirm your email address</h1>
        <p class="lede">
          Confirm that <strong>{props.asked.email}</strong> is yours: the free trial waits for it.
        </p>
        <form class="stack" data-api="/api/auth/email-confirmation" data-then="go:/verify-email?confirmed=1" novalidate>
          <p class="form-error" role="alert"></p>
          <input type="hidden" name="token" value={props.asked.token} />
          <button type="submit">Confirm {props.asked.email}</button>
        </form>
      </div>
    </CardPage>
  ) : 'confirmed' in props ? (
    <OutcomePage title="Email address confirmed" heading="Email address confirmed" lede="Your email address is confirmed: the free trial can now be started from the dashboard." />
  ) : (
    <OutcomePage title="Confirmation link not valid" heading="This link does not confirm anything" lede={props.refused} />
  );

export const verifyEmailPage = sitePage({
  path: '/verify-email',
  load: async (c): Promise<Props> => {
    if (c.req.query('confirmed') === '1') return { confirmed: true };
    // The token is in this page's address: it sends no Referer.
    c.header('Referrer-Policy', 'no-referrer');
    const token = c.req.query('token') ?? '';
    const link = /^[0-9a-f]{64}$/.test(token) ? await confirmationLinkFor(c.env.DB, token) : null;
    return link ? { asked: { token, email: link.email } } : { refused: INVALID_CONFIRMATION_LINK };
  },
  view: VerifyEmailPage,
  status: (props) => ('refused' in props ? 404 : 200),
});
