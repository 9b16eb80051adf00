import type { FC } from 'hono/jsx';
import { emailChangeFor, INVALID_EMAIL_CHANGE_LINK } from '../email-changes';
import { EmailLinkCard, OutcomePage } from './layout';
import { emailLinkToken, sitePage } from './page';

type Props = { asked: { token: string; oldEmail: string; newEmail: string } } | { changed: true } | { refused: string };

/**
 * Where the link sent to a new address lands. Opening it changes nothing (mail scanners open every link of a message,
 * and a mistyped address's scanner would otherwise take the account); its button moves the account
 * (api/email-links.ts), then comes back here to say so.
 */
export const ConfirmEmailChangePage: FC<Props> = (props) =>
  'asked' in props ? (
    <EmailLinkCard
      title="Change your email address"
      lede={
        <>
          The Sluice account of <strong>{props.asked.oldEmail}</strong> will sign in with <strong>{props.asked.newEmail}</strong> from now on, and the old address will be told.
        </>
      }
      api="/api/auth/email-change/confirm"
      then="/confirm-email-change?changed=1"
      token={props.asked.token}
      button={`Sign in with ${props.asked.newEmail}`}
    />
  ) : 'changed' in props ? (
    <OutcomePage title="Email address changed" heading="Email address changed" lede="You sign in with the new address from now on. The old address was told." />
  ) : (
    <OutcomePage title="Link not valid" heading="This link does not change any address" lede={props.refused} />
  );

export const confirmEmailChangePage = sitePage({
  path: '/confirm-email-change',
  load: async (c): Promise<Props> => {
    if (c.req.query('changed') === '1') return { changed: true };
    const token = emailLinkToken(c);
    const change = token ? await emailChangeFor(c.env.DB, token) : null;
    return token && change ? { asked: { token, ...change } } : { refused: INVALID_EMAIL_CHANGE_LINK };
  },
  view: ConfirmEmailChangePage,
  status: (props) => ('refused' in props ? 404 : 200),
});
