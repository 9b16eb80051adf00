import type { FC } from 'hono/jsx';
import type { SessionUser } from '../context';
import { readSession } from '../auth/sessions';
import { outbox, type OutboxMessage } from '../../services/email';
import { type Invitation, invitationByToken } from '../invitations';
import { CardPage, Document, formatDate } from './layout';
import { notFound } from './not-found';
import { sitePage } from './page';

export const InvitationPage: FC<{ invitation: (Invitation & { organizationName: string }) | null; user: SessionUser | null; path: string }> = ({ invitation, user, path }) => (
  <CardPage title="Invitation">
    <div class="card stack">
      {!invitation ? (
        <>
          <h1>No such invitation</h1>
          <p class="lede">This link does not lead to an invitation. Ask the person who invited you for a new one.</p>
        </>
      ) : invitation.status !== 'pending' ? (
        <>
          <h1>Invitation {invitation.status}</h1>
          <p class="lede">This invitation to {invitation.organizationName} was {invitation.status} and cannot be used again. Ask for a new one.</p>
        </>
      ) : (
        <>
          <h1>Join {invitation.organizationName}</h1>
          <p class="lede">
            You are invited as <strong>{invitation.role}</strong>. The invitation is for <strong>{invitation.email}</strong> and works until {formatDate(invitation.expiresAt)}.
          </p>
          {user ? (
            <>
              <p class="small muted">Signed in as {user.email}.</p>
              <p class="form-error" id="page-status" role="alert"></p>
              <p class="centered">
                <button type="button" data-api={`/api/invitations${path.slice('/invitations'.length)}/accept`} data-then="go:/">
                  Accept invitation
                </button>
              </p>
            </>
          ) : (
            <p class="centered">
              <a class="button" href={`/signup?next=${encodeURIComponent(path)}`}>
                Create an account
              </a>{' '}
              or <a href={`/signin?next=${encodeURIComponent(path)}`}>sign in</a> as {invitation.email}.
            </p>
          )}
        </>
      )}
    </div>
  </CardPage>
);

/** Development only (DEV_OUTBOX=1): what the dashboard would have emailed, newest first. */
export const OutboxPage: FC<{ messages: OutboxMessage[] }> = ({ messages }) => (
  <Document title="Development outbox">
    <main class="main">
      <h1>Development outbox</h1>
      <p class="muted">Emails the dashboard would send. Shown because DEV_OUTBOX=1 (npm start); a deployment sends them through its email provider instead.</p>
      {messages.length === 0 ? <p class="empty">Nothing sent yet.</p> : null}
      {messages.map((message) => (
        <article class="card" data-message-to={message.recipient}>
          <h2>{message.subject}</h2>
          <p class="muted small">
            To {message.recipient} · {formatDate(message.createdAt)}
          </p>
          <pre>
            {message.body.split(/(https?:\/\/[^\s<>"]+)/).map((part, index) => (index % 2 === 1 ? <a href={part}>{part}</a> : part))}
          </pre>
        </article>
      ))}
    </main>
  </Document>
);

export const invitationPage = sitePage({
  path: '/invitations/:token',
  load: async (c) => {
    const [invitation, session] = await Promise.all([invitationByToken(c.env.DB, c.req.param('token') ?? ''), readSession(c)]);
    return { invitation, user: session?.user ?? null, path: c.req.path };
  },
  view: InvitationPage,
  status: ({ invitation }) => (invitation ? 200 : 404),
});

/** The emails the installation would have sent, when DEV_OUTBOX=1 (development and tests only). */
export const outboxPage = sitePage({
  path: '/dev/outbox',
  load: async (c) => (c.env.DEV_OUTBOX === '1' ? { messages: await outbox(c.env.DB) } : notFound(c, await readSession(c))),
  view: OutboxPage,
});
