import type { FC } from 'hono/jsx';
import { OutcomePage } from './layout';
import { sitePage } from './page';

/** Where the browser goes once its account is deleted: signed out, nothing of it left to show. */
export const AccountDeletedPage: FC = () => (
  <OutcomePage
    title="Account deleted"
    heading="Your account was deleted"
    lede="You are signed out, and we emailed the address it had. Organizations you were alone in are closed; the others go on without you."
    next={{ href: '/signup', label: 'Create a new account' }}
  />
);

export const accountDeletedPage = sitePage({ path: '/account-deleted', load: async () => ({}), view: AccountDeletedPage });
