import type { FC } from 'hono/jsx';
import { ApiError } from '../../core/errors';
import { confirmEmailChange, tellOldAddress } from '../email-changes';
import { CardPage } from './layout';
import { sitePage } from './page';

type Outcome = { changed: string } | { refused: string };

/** Where the link sent to a new address lands: the account moves to it by opening the link, once. */
export const ConfirmEmailChangePage: FC<Outcome> = (outcome) => (
  <CardPage title={'changed' in outcome ? 'Email address changed' : 'Link not valid'}>
    <div class="card stack">
      <h1>{'changed' in outcome ? 'Email address changed' : 'This link does not change any address'}</h1>
      <p class="lede">
        {'changed' in outcome ? (
          <>
            You sign in with <strong>{outcome.changed}</strong> from now on. The old address was told.
          </>
        ) : (
          outcome.refused
        )}
      </p>
      <p class="centered">
        <a class="button" href="/">
          Go to the dashboard
        </a>
      </p>
    </div>
  </CardPage>
);

export const confirmEmailChangePage = sitePage({
  path: '/confirm-email-change',
  load: async (c): Promise<Outcome> => {
    // The token is in this page's address: it sends no Referer.
    c.header('Referrer-Policy', 'no-referrer');
    try {
      const change = await confirmEmailChange(c.env.DB, c.req.query('token') ?? '');
      c.executionCtx.waitUntil(tellOldAddress(c.env, change));
      return { changed: change.newEmail };
    } catch (error) {
      if (error instanceof ApiError) return { refused: error.message };
      throw error;
    }
  },
  view: ConfirmEmailChangePage,
  status: (outcome) => ('changed' in outcome ? 200 : 404),
});
