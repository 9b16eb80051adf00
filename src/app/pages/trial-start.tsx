import type { FC } from 'hono/jsx';
import type { SessionUser } from '../context';

/**
 * The free trial's start, wherever a page offers it: the button, or, until the person has confirmed their
 * email address (the trial waits for it), where the link went and a button that sends a new one.
 */
export const TrialStart: FC<{ organizationId: string; user: SessionUser; small?: boolean }> = ({ organizationId, user, small }) =>
  user.emailVerifiedAt ? (
    <button type="button" class={small ? 'small' : undefined} data-api={`/api/organizations/${organizationId}/trial`} data-then="reload">
      Start free trial
    </button>
  ) : (
    <ConfirmEmailFirst user={user} before="first" />
  );

/** What waits for a confirmed address says in its place: where the link went, and a button that sends a new one. */
export const ConfirmEmailFirst: FC<{ user: SessionUser; before: string }> = ({ user, before }) => (
  <span class="verify-first" data-verify-first>
    <strong>Confirm your email address {before}</strong>: open the link we sent to {user.email}.{' '}
    <button type="button" class="small secondary" data-api="/api/me/email-verification" data-then="verification-sent">
      Send a new link
    </button>
  </span>
);
