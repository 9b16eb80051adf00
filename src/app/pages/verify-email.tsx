import type { FC } from 'hono/jsx';
import { ApiError } from '../../core/errors';
import { confirmEmail } from '../email-verification';
import { CardPage } from './layout';
import { sitePage } from './page';

type Outcome = { confirmed: string } | { refused: string };

/** Where a confirmation email's link lands: the address is confirmed by opening it, once. */
export const VerifyEmailPage: FC<Outcome> = (outcome) => (
  <CardPage title={'confirmed' in outcome ? 'Email address confirmed' : 'Confirmation link not valid'}>
    <div class="card stack">
      {'confirmed' in outcome ? (
        <>
          <h1>Email address confirmed</h1>
          <p class="lede">
            <strong>{outcome.confirmed}</strong> is confirmed: the free trial can now be started from the dashboard.
          </p>
          <p class="centered">
            <a class="button" href="/">
              Go to the dashboard
            </a>
          </p>
        </>
      ) : (
        <>
          <h1>This link does not confirm anything</h1>
          <p class="lede">{outcome.refused}</p>
          <p class="centered">
            <a class="button" href="/">
              Go to the dashboard
            </a>
          </p>
        </>
      )}
    </div>
  </CardPage>
);

export const verifyEmailPage = sitePage({
  path: '/verify-email',
  load: async (c): Promise<Outcome> => {
    try {
      return { confirmed: (await confirmEmail(c.env.DB, c.req.query('token') ?? '')).email };
    } catch (error) {
      if (error instanceof ApiError) return { refused: error.message };
      throw error;
    }
  },
  view: VerifyEmailPage,
  status: (outcome) => ('confirmed' in outcome ? 200 : 404),
});
