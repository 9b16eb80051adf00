import type { FC } from 'hono/jsx';
import { ApiError } from '../../core/errors';
import { confirmEmailChange, tellOldAddress } from '../email-changes';
import { OutcomePage } from './layout';
import { sitePage } from './page';

type Outcome = { changed: string } | { refused: string };

/** Where the link sent to a new address lands: the account moves to it by opening the link, once. */
export const ConfirmEmailChangePage: FC<Outcome> = (outcome) =>
  'changed' in outcome ? (
    <OutcomePage
      title="Email address changed"
      heading="Email address changed"
      lede={
        <>
          You sign in with <strong>{outcome.changed}</strong> from now on. The old address was told.
        </>
      }
    />
  ) : (
    <OutcomePage title="Link not valid" heading="This link does not change any address" lede={outcome.refused} />
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
