import { newId } from '../core/ids';
import type { Env } from '../core/config';

export interface Email {
  to: string;
  subject: string;
  text: string;
}

export type Delivery = { sent: 'provider'; id: string } | { sent: 'outbox' } | { sent: 'nowhere' };

/**
 * Sends a message Sluice owes someone (an invitation, a notice of a change to their account). With RESEND_API_KEY it goes through Resend's
 * email API; with the development outbox enabled (npm start) it is kept in D1 and shown at /dev/outbox;
 * with neither it is not sent, and the dashboard shows the link to copy instead.
 */
export async function sendEmail(env: Env, email: Email): Promise<Delivery> {
  const route = deliveryRoute(env);
  if (route === 'provider') {
    const response = await fetch(`${(env.RESEND_BASE_URL ?? 'https://api.resend.com').replace(/\/+$/, '')}/emails`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.RESEND_API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ from: env.EMAIL_FROM ?? 'Sluice <no-reply@sluice.dev>', to: [email.to], subject: email.subject, text: email.text }),
    });
    const body = (await response.json().catch(() => ({}))) as { id?: string; message?: string };
    if (!response.ok || !body.id) throw new Error(`Resend refused the message (${response.status}): ${body.message ?? 'no message'}`);
    return { sent: 'provider', id: body.id };
  }
  if (route === 'outbox') {
    await env.DB.prepare('INSERT INTO email_outbox (id, recipient, subject, body, created_at) VALUES (?, ?, ?, ?, ?)')
      .bind(newId('msg'), email.to, email.subject, email.text, new Date().toISOString())
      .run();
    return { sent: 'outbox' };
  }
  return { sent: 'nowhere' };
}

/** Where this installation's emails go, whoever they are for: what a page may say without telling whether an account exists. */
export function deliveryRoute(env: Env): Delivery['sent'] {
  return env.RESEND_API_KEY ? 'provider' : env.DEV_OUTBOX === '1' ? 'outbox' : 'nowhere';
}

/**
 * Sends `email` as sendEmail does, but a provider's refusal is logged (with `failure`'s note and ids) and
 * answered `nowhere`, not thrown: what the email was for (an invitation, an account) stands, and the dashboard
 * offers its link another way or sends it again.
 */
export async function sendEmailOrLog(env: Env, email: Email, failure: { note: string } & Record<string, string>): Promise<Delivery> {
  return sendEmail(env, email).catch((error: unknown) => {
    console.error(JSON.stringify({ level: 'error', ...failure, error: String(error) }));
    return { sent: 'nowhere' as const };
  });
}

export interface OutboxMessage {
  id: string;
  recipient: string;
  subject: string;
  body: string;
  createdAt: string;
}

export async function outbox(db: D1Database, limit = 50): Promise<OutboxMessage[]> {
  const { results } = await db
    .prepare('SELECT id, recipient, subject, body, created_at AS createdAt FROM email_outbox ORDER BY created_at DESC, id DESC LIMIT ?')
    .bind(limit)
    .all<OutboxMessage>();
  return results;
}
