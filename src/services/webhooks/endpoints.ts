import { z } from '@hono/zod-openapi';
import { clock } from '../../core/clock';
import type { Env } from '../../core/config';
import { ApiError } from '../../core/errors';
import { isLiveWorkspace, workspaceIsLive } from '../live-workspaces';
import { newId } from '../../core/ids';
import { decryptKey, encryptKey } from '../../core/keys';
import { parseTarget, SafeFetcher } from '../../providers/builtin-web/safe-fetch';
import { builtinWebSettings, hostPortOf } from '../../providers/builtin-web/settings';
import { RETRY_ADVICE } from '../../providers/normalize';
import { EventName, type EventType, ORGANIZATION_EVENTS } from '../../core/webhook-events';
import { senderOf, type WebhookBindings } from './bindings';

/** A workspace's endpoints: enough for several receivers, few enough that one event cannot fan out without bound. */
export const MAX_ENDPOINTS_PER_WORKSPACE = 20;
/** credits.low fires below $1 unless the endpoint says otherwise. */
export const DEFAULT_CREDITS_LOW_THRESHOLD_CENTS = 100;

export const WebhookEndpoint = z
  .object({
    id: z.string().openapi({ example: 'we_4f1c2a9b7d3e4f6a8b0c1d2e' }),
    workspaceId: z.string(),
    url: z.string().openapi({ example: 'https://hooks.example.com/sluice' }),
    events: z.array(EventName),
    creditsLowThresholdCents: z.number().int().openapi({ description: 'credits.low is sent when the available balance falls below this.' }),
    createdAt: z.string(),
    updatedAt: z.string(),
    previousSecretExpiresAt: z
      .string()
      .nullable()
      .openapi({ description: 'After a rotation, until when the secret it replaced still signs deliveries beside the new one; null when only one secret signs.' }),
  })
  .openapi('WebhookEndpoint');
export type WebhookEndpoint = z.infer<typeof WebhookEndpoint>;

const url = z.string().min(1).max(2048).openapi({ description: 'A public http(s) URL; private, loopback and link-local addresses are refused.', example: 'https://hooks.example.com/sluice' });
const events = z
  .array(EventName)
  .min(1, 'Subscribe to at least one event.')
  .transform((names) => [...new Set(names)])
  .openapi({ description: 'Event types to send.', example: ['credits.low', 'key.created'] });
const creditsLowThresholdCents = z.number().int().min(0).max(100_000_000).openapi({ description: `Cents; default ${DEFAULT_CREDITS_LOW_THRESHOLD_CENTS}.`, example: 500 });

export const CreateWebhookEndpoint = z.strictObject({ url, events, creditsLowThresholdCents: creditsLowThresholdCents.optional() }).openapi('CreateWebhookEndpoint');
export const UpdateWebhookEndpoint = z
  .strictObject({ url: url.optional(), events: events.optional(), creditsLowThresholdCents: creditsLowThresholdCents.optional() })
  .refine((patch) => Object.keys(patch).length > 0, 'Give at least one of url, events, creditsLowThresholdCents.')
  .openapi('UpdateWebhookEndpoint');

interface EndpointRow {
  id: string;
  workspaceId: string;
  url: string;
  events: string;
  creditsLowThresholdCents: number;
  createdAt: string;
  updatedAt: string;
  previousSecretExpiresAt: number | null;
}

const COLUMNS = `id, workspace_id AS workspaceId, url, events, credits_low_threshold_cents AS creditsLowThresholdCents,
  created_at AS createdAt, updated_at AS updatedAt, previous_secret_expires_at AS previousSecretExpiresAt`;

/** Whether the secret a rotation replaced still signs, by when it stops (epoch ms; null: none was replaced). */
const stillSigns = (until: number | null): until is number => until !== null && until > clock.now();

function record(row: EndpointRow): WebhookEndpoint {
  const previousUntil = stillSigns(row.previousSecretExpiresAt) ? new Date(row.previousSecretExpiresAt).toISOString() : null;
  return { ...row, events: JSON.parse(row.events) as EventType[], previousSecretExpiresAt: previousUntil };
}

/** A signing secret as Standard Webhooks spells it: `whsec_` and the base64 of 32 random bytes. */
function newSigningSecret(): string {
  return `whsec_${btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))))}`;
}

/**
 * Refuses, as the scraper does, any URL that is not a public http(s) address: 400 VALIDATION_ERROR on `url`. A host
 * name that does not resolve (a typo, most often) is refused the same way, since the URL is what must change; the
 * scraper answers a page's failing name 502, which a client retries. Our own resolver unreachable stays 503.
 * And https only, but for a receiver the operator allowed on their own network: events carry balances, key names
 * and usage, which a signature proves but does not hide, and a delivery seen on the way could be replayed.
 */
async function assertDeliverable(env: Env, text: string): Promise<string> {
  const target = parseTarget(text, 'url');
  const settings = builtinWebSettings(env, 'WEBHOOK_ALLOW_PRIVATE_HOSTS');
  try {
    await new SafeFetcher({ settings, signal: AbortSignal.timeout(10_000) }).assertPublic(target, 'url');
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== 'PROVIDER_ERROR') throw error;
    const why = `${target.hostname} could not be resolved (${error.message.replace(` ${RETRY_ADVICE}`, '').replace(/\.$/, '')}): check the URL's host name.`;
    throw ApiError.validation([{ field: 'url', location: 'body', message: why }], why);
  }
  if (target.protocol !== 'https:' && !settings.allowedPrivateHosts.has(hostPortOf(target))) {
    const why = `Webhook URLs must be https (${target.href} is not): events carry balances, key names and usage, which a signature does not hide.`;
    throw ApiError.validation([{ field: 'url', location: 'body', message: why }], why);
  }
  return target.href;
}

function tooManyEndpoints(): ApiError {
  return ApiError.conflict(`A workspace has at most ${MAX_ENDPOINTS_PER_WORKSPACE} webhook endpoints; delete one first.`);
}

/** Creates an endpoint and answers its signing secret: the only time the secret leaves the server. */
export async function createEndpoint(env: Env, workspaceId: string, input: z.infer<typeof CreateWebhookEndpoint>): Promise<WebhookEndpoint & { secret: string }> {
  const count = await env.DB.prepare('SELECT COUNT(*) AS n FROM webhook_endpoints WHERE workspace_id = ?').bind(workspaceId).first<{ n: number }>();
  if ((count?.n ?? 0) >= MAX_ENDPOINTS_PER_WORKSPACE) throw tooManyEndpoints();
  const now = new Date(clock.now()).toISOString();
  const endpoint: WebhookEndpoint = {
    id: newId('we'),
    workspaceId,
    url: await assertDeliverable(env, input.url),
    events: input.events,
    creditsLowThresholdCents: input.creditsLowThresholdCents ?? DEFAULT_CREDITS_LOW_THRESHOLD_CENTS,
    createdAt: now,
    updatedAt: now,
    previousSecretExpiresAt: null,
  };
  const secret = newSigningSecret();
  // Counted again in the insert: two made at once cannot both take the last place.
  const stored = await env.DB.prepare(
    `INSERT INTO webhook_endpoints (id, workspace_id, url, events, credits_low_threshold_cents, secret_ciphertext, created_at, updated_at)
     SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7 WHERE (SELECT COUNT(*) FROM webhook_endpoints WHERE workspace_id = ?2) < ?8 AND ${workspaceIsLive('?2')}`,
  )
    .bind(endpoint.id, workspaceId, endpoint.url, JSON.stringify(endpoint.events), endpoint.creditsLowThresholdCents, await encryptKey(secret, sealedAs(endpoint.id, 'current'), env.KEY_ENCRYPTION_KEY), now, MAX_ENDPOINTS_PER_WORKSPACE)
    .run();
  if (stored.meta.changes !== 1) throw (await isLiveWorkspace(env.DB, workspaceId)) ? tooManyEndpoints() : ApiError.notFound(`No workspace ${workspaceId}.`);
  if (hearsOfCredits(endpoint.events)) await audienceChanged(env, workspaceId);
  return { ...endpoint, secret };
}

export async function listEndpoints(db: D1Database, workspaceId: string): Promise<WebhookEndpoint[]> {
  const { results } = await db.prepare(`SELECT ${COLUMNS} FROM webhook_endpoints WHERE workspace_id = ? ORDER BY created_at DESC, id DESC`).bind(workspaceId).all<EndpointRow>();
  return results.map(record);
}

/** The workspace's endpoints, each with its latest deliveries: what the dashboard's page and the MCP listing show. */
export async function listEndpointsWithDeliveries(env: WebhookBindings, workspaceId: string, latest = 10) {
  const endpoints = await listEndpoints(env.DB, workspaceId);
  return Promise.all(endpoints.map(async (endpoint) => ({ ...endpoint, deliveries: await senderOf(env, endpoint.id).deliveries(latest) })));
}

/** An endpoint of this workspace; another workspace's reads as missing. */
export async function endpointOf(db: D1Database, workspaceId: string, id: string): Promise<WebhookEndpoint> {
  const row = await db.prepare(`SELECT ${COLUMNS} FROM webhook_endpoints WHERE id = ? AND workspace_id = ?`).bind(id, workspaceId).first<EndpointRow>();
  if (!row) throw ApiError.notFound(`No webhook endpoint ${id} in this workspace.`);
  return record(row);
}

export async function updateEndpoint(env: Env, workspaceId: string, id: string, patch: z.infer<typeof UpdateWebhookEndpoint>): Promise<WebhookEndpoint> {
  const current = await endpointOf(env.DB, workspaceId, id);
  const next: WebhookEndpoint = {
    ...current,
    url: patch.url === undefined ? current.url : await assertDeliverable(env, patch.url),
    events: patch.events ?? current.events,
    creditsLowThresholdCents: patch.creditsLowThresholdCents ?? current.creditsLowThresholdCents,
    updatedAt: new Date(clock.now()).toISOString(),
  };
  const written = await env.DB.prepare('UPDATE webhook_endpoints SET url = ?, events = ?, credits_low_threshold_cents = ?, updated_at = ? WHERE id = ? AND workspace_id = ?')
    .bind(next.url, JSON.stringify(next.events), next.creditsLowThresholdCents, next.updatedAt, id, workspaceId)
    .run();
  // Deleted while the new URL was checked: nothing was changed, and the answer says so.
  if (written.meta.changes !== 1) throw ApiError.notFound(`No webhook endpoint ${id} in this workspace.`);
  if (hearsOfCredits(current.events) || hearsOfCredits(next.events)) await audienceChanged(env, workspaceId);
  return next;
}

/** Deletes the endpoint, and with it every delivery waiting for a retry and the record of past attempts. */
export async function deleteEndpoint(env: Env, workspaceId: string, id: string): Promise<void> {
  const endpoint = await endpointOf(env.DB, workspaceId, id);
  await env.DB.prepare('DELETE FROM webhook_endpoints WHERE id = ?').bind(endpoint.id).run();
  await senderOf(env, endpoint.id).forget();
  if (hearsOfCredits(endpoint.events)) await audienceChanged(env, workspaceId);
}

/** How long the secret a rotation replaced keeps signing beside the new one: a day to move every receiver over. */
export const PREVIOUS_SECRET_KEPT_MS = 24 * 60 * 60_000;

/** The associated data each secret is sealed under: the endpoint's, and apart for the replaced one, so neither passes for the other. */
const sealedAs = (id: string, which: 'current' | 'previous') => (which === 'current' ? id : `${id}:previous`);

/**
 * A new signing secret, answered this once, as at creation. The one it replaces keeps signing beside it for
 * PREVIOUS_SECRET_KEPT_MS (Standard Webhooks sends both signatures in one header, and a receiver accepts either), so a
 * receiver can be moved over without a delivery failing; a leaked secret is ended sooner by rotating again, which
 * drops the one before. Pending retries are kept, unlike a delete and create.
 */
export async function rotateSecret(env: Env, workspaceId: string, id: string): Promise<WebhookEndpoint & { secret: string }> {
  const row = await env.DB.prepare('SELECT secret_ciphertext AS ciphertext FROM webhook_endpoints WHERE id = ? AND workspace_id = ?').bind(id, workspaceId).first<{ ciphertext: string }>();
  if (!row) throw ApiError.notFound(`No webhook endpoint ${id} in this workspace.`);
  const replaced = await decryptKey(row.ciphertext, sealedAs(id, 'current'), env.KEY_ENCRYPTION_KEY);
  const secret = newSigningSecret();
  const now = clock.now();
  // Over the secret read: a rotation beside this one wins, and this one says so rather than dropping its secret.
  const written = await env.DB.prepare(
    `UPDATE webhook_endpoints SET secret_ciphertext = ?1, previous_secret_ciphertext = ?2, previous_secret_expires_at = ?3, updated_at = ?4
      WHERE id = ?5 AND workspace_id = ?6 AND secret_ciphertext = ?7`,
  )
    .bind(
      await encryptKey(secret, sealedAs(id, 'current'), env.KEY_ENCRYPTION_KEY),
      await encryptKey(replaced, sealedAs(id, 'previous'), env.KEY_ENCRYPTION_KEY),
      now + PREVIOUS_SECRET_KEPT_MS,
      new Date(now).toISOString(),
      id,
      workspaceId,
      row.ciphertext,
    )
    .run();
  if (written.meta.changes !== 1) throw ApiError.conflict(`The secret of webhook endpoint ${id} was rotated or the endpoint removed meanwhile; look again.`);
  return { ...(await endpointOf(env.DB, workspaceId, id)), secret };
}

/**
 * Forgets the replaced secrets that no longer sign (the nightly run): sealed as they are, they are still secret
 * material with no use left. Answers how many. The expiry as a bound, through the partial index (migrations/0058).
 */
export async function forgetReplacedSecrets(db: D1Database, now = clock.now()): Promise<number> {
  const forgotten = await db
    .prepare('UPDATE webhook_endpoints SET previous_secret_ciphertext = NULL, previous_secret_expires_at = NULL WHERE previous_secret_expires_at IS NOT NULL AND previous_secret_expires_at <= ?')
    .bind(now)
    .run();
  return forgotten.meta.changes;
}

/**
 * Where and how a delivery goes right now (a PATCHed URL applies to pending retries too): its URL and the secrets that
 * sign it, the current one first, then the one a rotation replaced while it is kept. Null once deleted.
 */
export async function deliveryTarget(env: { DB: D1Database; KEY_ENCRYPTION_KEY: string }, id: string): Promise<{ url: string; secrets: string[] } | null> {
  const row = await env.DB.prepare(
    'SELECT url, secret_ciphertext AS ciphertext, previous_secret_ciphertext AS previous, previous_secret_expires_at AS previousUntil FROM webhook_endpoints WHERE id = ?',
  )
    .bind(id)
    .first<{ url: string; ciphertext: string; previous: string | null; previousUntil: number | null }>();
  if (!row) return null;
  const secrets = [await decryptKey(row.ciphertext, sealedAs(id, 'current'), env.KEY_ENCRYPTION_KEY)];
  if (row.previous && stillSigns(row.previousUntil)) secrets.push(await decryptKey(row.previous, sealedAs(id, 'previous'), env.KEY_ENCRYPTION_KEY));
  return { url: row.url, secrets };
}

export interface SubscribedEndpoint {
  id: string;
  workspaceId: string;
  organizationId: string;
  creditsLowThresholdCents: number;
}

/** Who hears of an organization's credits: the credits.low thresholds its endpoints set, and whether any wants credits.exhausted. */
export interface CreditAudience {
  thresholdsCents: number[];
  exhausted: boolean;
}

/** One read of the organization's endpoints for `CreditAudience`: what the wallet keeps, so its alarms need not ask. */
export async function creditAudience(db: D1Database, organizationId: string): Promise<CreditAudience> {
  const { results } = await db
    .prepare(
      `SELECT e.credits_low_threshold_cents AS threshold,
              EXISTS (SELECT 1 FROM json_each(e.events) WHERE json_each.value = 'credits.low') AS low,
              EXISTS (SELECT 1 FROM json_each(e.events) WHERE json_each.value = 'credits.exhausted') AS exhausted
         FROM webhook_endpoints e JOIN workspaces w ON w.id = e.workspace_id
        WHERE w.organization_id = ? AND w.deleted_at IS NULL AND EXISTS (SELECT 1 FROM json_each(e.events) WHERE json_each.value IN ('credits.low', 'credits.exhausted'))`,
    )
    .bind(organizationId)
    .all<{ threshold: number; low: number; exhausted: number }>();
  return {
    thresholdsCents: [...new Set(results.filter((row) => row.low === 1).map((row) => row.threshold))].sort((a, b) => a - b),
    exhausted: results.some((row) => row.exhausted === 1),
  };
}

/**
 * Tells the organization's wallet that who hears of its credits may have changed (an endpoint added, changed or
 * removed), so its next alarm reads it again. A failure is logged: the wallet reads it again within
 * CREDIT_AUDIENCE_FRESH_MS anyway.
 */
async function audienceChanged(env: Env, workspaceId: string): Promise<void> {
  try {
    const workspace = await env.DB.prepare('SELECT organization_id AS organizationId FROM workspaces WHERE id = ?').bind(workspaceId).first<{ organizationId: string }>();
    if (workspace) await env.ORG_WALLET.get(env.ORG_WALLET.idFromName(workspace.organizationId)).forgetCreditAudience();
  } catch (error) {
    console.error(JSON.stringify({ level: 'error', note: 'credit audience not forgotten', workspaceId, error: String(error) }));
  }
}

const hearsOfCredits = (events: readonly EventType[]) => events.some((event) => ORGANIZATION_EVENTS.includes(event));

/** The endpoints an event reaches: those of the workspace, or of every workspace of the organization, subscribed to it. */
export async function subscribedEndpoints(db: D1Database, audience: { workspaceId: string } | { organizationId: string }, type: EventType): Promise<SubscribedEndpoint[]> {
  const [column, value] = 'workspaceId' in audience ? ['w.id', audience.workspaceId] : ['w.organization_id', audience.organizationId];
  const { results } = await db
    .prepare(
      `SELECT e.id, e.workspace_id AS workspaceId, w.organization_id AS organizationId, e.credits_low_threshold_cents AS creditsLowThresholdCents
         FROM webhook_endpoints e JOIN workspaces w ON w.id = e.workspace_id
        WHERE ${column} = ? AND w.deleted_at IS NULL AND EXISTS (SELECT 1 FROM json_each(e.events) WHERE json_each.value = ?)
        ORDER BY e.created_at, e.id`,
    )
    .bind(value, type)
    .all<SubscribedEndpoint>();
  return results;
}

/** An endpoint as created: the only time its signing secret is answered. */
export const WebhookEndpointWithSecret = WebhookEndpoint.extend({
  secret: z.string().openapi({ description: 'The signing secret (Standard Webhooks, whsec_...). Shown this once: store it now.', example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }),
}).openapi('WebhookEndpointWithSecret');
