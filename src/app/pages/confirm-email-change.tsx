import type { FC } from 'hono/jsx';
import { emailChangeFor, INVALID_EMAIL_CHANGE_LINK } from '../email-changes';
import { CardPage, OutcomePage } from './layout';
import { sitePage } from './page';

type Props = { asked: { token: string; oldEmail: string; newEmail: string } } | { changed: true } | { refused: string };

/**
 * Where the link sent to a new address lands. Opening it changes nothing (mail scanners open every link of a message,
 * and a mistyped address's scanner would otherwise take the account); its button moves the account
 * (api/email-links.ts), then comes back here to say so.
 */
export const ConfirmEmailChangePage: FC<Props> = (props) =>
  'asked' in props ? (
    <CardPage title="Change your email address">
      <div class="card">
        <h1>Change your email address</h1>
        <p class="lede">
          The Sluice account of <strong>{props.asked.oldEmail}</strong> will sign in with <strong>{props.asked.newEmail}</strong> from now on, and the old address will be told.
        </p>
        <form class="stack" data-api="/api/auth/email-change/confirm" data-then="go:/confirm-email-change?changed=1" novalidate>
          <p class="form-error" role="alert"></p>
          <input type="hidden" name="token" value={props.asked.token} />
          <button type="submit">Sign in with {props.asked.newEmail}</button>
        </form>
      </div>
    </CardPage>
  ) : 'changed' in props ? (
    <OutcomePage title="Email address changed" heading="Email address changed" lede="You sign in with the new address from now on. The old address was told." />
  ) : (
    <OutcomePage title="Link not valid" heading="This link does not change any address" lede={props.refused} />
  );

export const confirmEmailChangePage = sitePage({
  path: '/confirm-email-change',
  load: async (c): Promise<Props> => {
    if (c.req.query('changed') === '1') return { changed: true };
    // The token is in this page's address: it sends no Referer.
    c.header('Referrer-Policy', 'no-referrer');
    const token = c.req.query('token') ?? '';
    const change = /^[0-9a-f]{64}$/.test(token) ? await emailChangeFor(c.env.DB, token) : null;
    return change ? { asked: { token, ...change } } : { refused: INVALID_EMAIL_CHANGE_LINK };
  },
  view: ConfirmEmailChangePage,
  status: (props) => ('refused' in props ? 404 : 200),
});
