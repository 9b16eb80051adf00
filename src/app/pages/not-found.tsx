import type { Context } from 'hono';
import type { FC } from 'hono/jsx';
import type { DashboardEnv, Session } from '../context';
import { CardPage } from './layout';
import { NO_STORE } from './page';

export const NotFoundPage: FC<{ signedIn: boolean }> = ({ signedIn }) => (
  <CardPage title="Not found">
    <div class="card stack">
      <h1>Nothing here</h1>
      <p class="lede">This page does not exist, or it belongs to an organization you are not a member of.</p>
      <p class="centered">
        <a class="button" href={signedIn ? '/' : '/signin'}>
          {signedIn ? 'Back to your dashboard' : 'Sign in'}
        </a>
      </p>
    </div>
  </CardPage>
);

export function notFound(c: Context<DashboardEnv>, session: Session | null) {
  return c.html(<NotFoundPage signedIn={session !== null} />, 404, NO_STORE);
}
