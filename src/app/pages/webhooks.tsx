import type { FC } from 'hono/jsx';
import type { Delivery } from '../../core/webhook-delivery';
import { DEFAULT_CREDITS_LOW_THRESHOLD_CENTS, type WebhookEndpoint } from '../../services/webhooks/endpoints';
import { EVENT_NAMES, EVENT_TYPES } from '../../core/webhook-events';
import { canManage } from '../members';
import { ApiForm, ConfirmButton, DateTime, Field, formatCents, PageHead } from './layout';
import { DataTable } from './table';
import { listEndpointsWithDeliveries } from '../../services/webhooks/endpoints';
import { webhookEventsUsed } from '../../services/webhooks/event-cap';
import { termsOf } from '../../services/plan-caps';
import { type WorkspaceProps, workspacePage } from './page';

export interface WebhooksPageProps extends WorkspaceProps {
  endpoints: (WebhookEndpoint & { deliveries: Delivery[] })[];
  /** Webhook events counted this month, and the plan's cap (null without a plan). */
  events: { used: number; limit: number | null };
}

const STATE_BADGE: Record<Delivery['state'], string> = { delivered: 'badge ok', pending: 'badge plain', failed: 'badge off', skipped: 'badge off' };

/** The workspace's webhook endpoints, each with its latest deliveries and every attempt; add, test and remove. */
export const WebhooksPage: FC<WebhooksPageProps> = (props) => {
  const { endpoints, access, events } = props;
  const base = `/api/workspaces/${access.workspace.id}/webhook-endpoints`;
  const manager = canManage(access.role);
  return (
    <>
      <PageHead
        title="Webhooks"
        lede={
          <>
            Endpoints that receive {access.workspace.name}'s events, signed per Standard Webhooks. Credit events of {access.organization.name} reach the endpoints of every
            workspace that subscribes to them. {events.limit === null ? 'Events need a plan.' : `${events.used} of ${events.limit.toLocaleString('en-US')} webhook events used this month.`}
          </>
        }
      />
      {endpoints.map((endpoint) => (
        <section class="card" data-endpoint-id={endpoint.id} aria-label={`Endpoint ${endpoint.url}`}>
          <header class="page-head">
            <div>
              <h2>
                <code>{endpoint.url}</code>
              </h2>
              <p class="muted small">
                {endpoint.events.join(', ')}
                {endpoint.events.includes('credits.low') ? ` · credits.low below ${formatCents(endpoint.creditsLowThresholdCents)}` : ''} · added <DateTime iso={endpoint.createdAt} />
                {endpoint.previousSecretExpiresAt ? (
                  <>
                    {' '}
                    · the replaced secret signs too until <DateTime iso={endpoint.previousSecretExpiresAt} />
                  </>
                ) : null}
              </p>
            </div>
            {manager ? (
              <div class="actions">
                <button type="button" class="secondary small" data-api={`${base}/${endpoint.id}/test`} aria-label={`Send test event to ${endpoint.url}`}>
                  Send test
                </button>
                <button
                  type="button"
                  class="secondary small"
                  data-api={`${base}/${endpoint.id}/rotate-secret`}
                  data-confirm={
                    endpoint.previousSecretExpiresAt
                      ? `Make a new signing secret for ${endpoint.url}? The secret replaced last, which still signs until ${endpoint.previousSecretExpiresAt.slice(0, 16).replace('T', ' ')} UTC, stops at once: only the current one and the new one will sign, for 24 hours. Do this when that secret leaked.`
                      : `Make a new signing secret for ${endpoint.url}? The current one keeps signing beside it for 24 hours, while you move your receiver to the new one.`
                  }
                  data-confirm-label="Rotate secret"
                  data-then="secret"
                  data-secret-field="secret"
                  data-secret-title="The endpoint's new signing secret"
                  data-secret-note="Copy it now: it is shown only this once. Deliveries carry a signature by each secret for the next 24 hours."
                  aria-label={`Rotate secret of ${endpoint.url}`}
                >
                  Rotate secret
                </button>
                <ConfirmButton api={`${base}/${endpoint.id}`} method="DELETE" confirm={`Remove ${endpoint.url}? Deliveries waiting for a retry are dropped.`} confirmLabel="Remove endpoint" ariaLabel={`Remove ${endpoint.url}`}>
                  Remove
                </ConfirmButton>
              </div>
            ) : null}
          </header>
          <DataTable
            rows={endpoint.deliveries}
            empty="Nothing sent yet. Send a test to see a delivery here."
            rowAttributes={(delivery) => ({ 'data-delivery-id': delivery.id })}
            columns={[
              {
                label: 'Event',
                cell: (delivery) => (
                  <>
                    {delivery.type}
                    <br />
                    <code class="small muted">{delivery.id}</code>
                  </>
                ),
              },
              {
                label: 'State',
                cell: (delivery) => (
                  <>
                    <span class={STATE_BADGE[delivery.state]}>{delivery.state}</span>
                    {delivery.reason ? <span class="muted small"> {delivery.reason}</span> : null}
                  </>
                ),
              },
              {
                label: 'Attempts',
                class: 'wide',
                cell: (delivery) =>
                  delivery.attempts.length === 0
                    ? '—'
                    : delivery.attempts.map((attempt) => (
                        <div class="small" title={attempt.error ?? undefined}>
                          #{attempt.attempt} <DateTime iso={attempt.at} />: {attempt.status === null ? 'no answer' : `HTTP ${attempt.status}`}
                          {attempt.error && attempt.status === null ? <span class="muted"> ({attempt.error})</span> : null}
                        </div>
                      )),
              },
              { label: 'Created', cell: (delivery) => <DateTime iso={delivery.createdAt} /> },
              { label: 'Next attempt', cell: (delivery) => <DateTime iso={delivery.nextAttemptAt} /> },
            ]}
          />
        </section>
      ))}
      {endpoints.length === 0 ? (
        <section class="card">
          <h2>Endpoints</h2>
          <p class="empty">No endpoint yet.</p>
        </section>
      ) : null}
      {manager ? (
        <section class="card">
          <h2>Add an endpoint</h2>
          <ApiForm
            class="stack"
            api={base}
            then="secret"
            secretField="secret"
            secretTitle="The endpoint's signing secret"
            secretNote="Copy it now: it is shown this once. Verify each delivery's webhook-signature with it (any Standard Webhooks library)."
          >
            <Field name="url" label="URL" type="url" placeholder="https://example.com/webhooks/sluice" hint="A public https address." maxlength={2048} />
            <fieldset class="tool-group">
              <legend>Events</legend>
              {EVENT_NAMES.map((name) => (
                <label title={EVENT_TYPES[name]}>
                  <input type="checkbox" name="events" value={name} data-list /> <code>{name}</code>
                </label>
              ))}
            </fieldset>
            <span class="field-error" data-field-error="events"></span>
            <div class="field grow">
              <label for="field-threshold">credits.low below (cents)</label>
              <input id="field-threshold" name="creditsLowThresholdCents" type="number" min="0" step="1" placeholder={String(DEFAULT_CREDITS_LOW_THRESHOLD_CENTS)} data-number aria-describedby="error-creditsLowThresholdCents" />
              <span class="field-error" id="error-creditsLowThresholdCents" data-field-error="creditsLowThresholdCents"></span>
            </div>
            <button type="submit">Add endpoint</button>
          </ApiForm>
        </section>
      ) : (
        <p class="muted small">Owners and admins add and remove endpoints.</p>
      )}
    </>
  );
};

export const webhooksPage = workspacePage({
  id: 'webhooks',
  title: 'Webhooks',
  icon: 'M4 17a3 3 0 1 0 6 0h7M17 17a3 3 0 1 0 3-3M12 5a3 3 0 1 0-3 5l-3 6M15 8l3 6',
  load: async (c, { access }) => {
    const [endpoints, used, terms] = await Promise.all([
      listEndpointsWithDeliveries(c.env, access.workspace.id),
      webhookEventsUsed(c.env.DB, access.organization.id),
      termsOf(c.env.DB, access.organization.id),
    ]);
    return { endpoints, events: { used, limit: terms.caps?.webhookEvents ?? null } };
  },
  view: WebhooksPage,
});
