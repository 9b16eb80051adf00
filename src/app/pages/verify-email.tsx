import type { FC } from 'hono/jsx';
import { confirmationLinkFor, INVALID_CONFIRMATION_LINK } from '../email-verification';
import { EmailLinkCard, OutcomePage } from './layout';
import { emailLinkToken, sitePage } from './page';

type Props = { asked: { token: string; email: string } } | { confirmed: true } | { refused: string };

/**
 * Where a confirmation email's link lands. Opening it spends nothing (mail scanners open every link of a message);
 * its button confirms the address (api/email-links.ts), then comes back here to say so.
 */
export const VerifyEmailPage: FC<Props> = (props) =>
  'asked' in props ? (
    <EmailLinkCard
      title="Confirm your email address"
      lede={
        <>
          Confirm that <strong>{props.asked.email}</strong> is yours: the free trial waits for it.
        </>
      }
      api="/api/auth/email-confirmation"
      then="/verify-email?confirmed=1"
      token={props.asked.token}
      button={`Confirm ${props.asked.email}`}
    />
  ) : 'confirmed' in props ? (
    <OutcomePage title="Email address confirmed" heading="Email address confirmed" lede="Your email address is confirmed: the free trial can now be started from the dashboard." />
  ) : (
    <OutcomePage title="Confirmation link not valid" heading="This link does not confirm anything" lede={props.refused} />
  );

export const verifyEmailPage = sitePage({
  path: '/verify-email',
  load: async (c): Promise<Props> => {
    if (c.req.query('confirmed') === '1') return { confirmed: true };
    const token = emailLinkToken(c);
    const link = token ? await confirmationLinkFor(c.env.DB, token) : null;
    return token && link ? { asked: { token, email: link.email } } : { refused: INVALID_CONFIRMATION_LINK };
  },
  view: VerifyEmailPage,
  status: (props) => ('refused' in props ? 404 : 200),
});
