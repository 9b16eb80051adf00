import type { FC } from 'hono/jsx';
import { ApiError } from '../../core/errors';
import { confirmEmail } from '../email-verification';
import { OutcomePage } from './layout';
import { sitePage } from './page';

type Outcome = { confirmed: string } | { refused: string };

/** Where a confirmation email's link lands: the address is confirmed by opening it, once. */
export const VerifyEmailPage: FC<Outcome> = (outcome) =>
  'confirmed' in outcome ? (
    <OutcomePage
      title="Email address confirmed"
      heading="Email address confirmed"
      lede={
        <>
          <strong>{outcome.confirmed}</strong> is confirmed: the free trial can now be started from the dashboard.
        </>
      }
    />
  ) : (
    <OutcomePage title="Confirmation link not valid" heading="This link does not confirm anything" lede={outcome.refused} />
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
