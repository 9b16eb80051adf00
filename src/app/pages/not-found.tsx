import type { Context } from 'hono';
import type { FC } from 'hono/jsx';
import type { DashboardEnv, Session } from '../context';
import { Document } from './layout';
import { NO_STORE } from './page';

export const NotFoundPage: FC<{ signedIn: boolean }> = ({ signedIn }) => (
  <Document title="Not found">
    <main class="error-page">
      <h1>Nothing here</h1>
      <p class="muted">This page does not exist, or it belongs to an organization you are not a member of.</p>
      <p>
        <a href={signedIn ? '/' : '/signin'}>{signedIn ? 'Back to your dashboard' : 'Sign in'}</a>
      </p>
    </main>
  </Document>
);

export function notFound(c: Context<DashboardEnv>, session: Session | null) {
  return c.html(<NotFoundPage signedIn={session !== null} />, 404, NO_STORE);
}
