import type { FC } from 'hono/jsx';
import { CAP_LABELS, CAP_NAMES, type Caps, type Plan, PLAN_TABLE, PLANS } from '../../core/plans';
import { canManage } from '../members';
import { ApiForm, Field, formatCents, PageHead } from './layout';
import { termsOf } from '../../services/plan-caps';
import { stripeOf } from '../billing';
import { TRIAL, trialState } from '../trial';
import { type WorkspaceProps, workspacePage } from './page';
import { TrialStart } from './trial-start';

export interface PlansPageProps extends WorkspaceProps {
  caps: Caps | null;
  /** Stripe is configured: plans and credit can be bought here. */
  billing: boolean;
  trial: { available: boolean; endsAt: string | null };
  /** The organization pays by a Stripe subscription, and when it ends if it was cancelled (null while it renews). */
  subscription: { endsAt: string | null } | null;
  /** The operator CLI's command that sets this organization's plan, told where the API is when that is not the CLI's default. */
  planCommand: string;
}

/** Where the operator CLI looks unless SLUICE_OPS_URL says otherwise (scripts/ops.ts). */
const OPS_DEFAULT_URL = 'http://127.0.0.1:8787';

/**
 * The comparison runs plans across and terms down: six plans fit the page's width, while the ten terms
 * would not (they overflowed the page as columns).
 */
const TERMS: { label: string; value: (plan: Plan, caps: Caps | null) => string }[] = [
  { label: 'Price / month', value: (plan) => (PLAN_TABLE[plan].priceCents === 0 ? 'usage only' : formatCents(PLAN_TABLE[plan].priceCents)) },
  { label: 'Credit included', value: (plan) => formatCents(PLAN_TABLE[plan].allowanceCents) },
  { label: 'Requests / min', value: (plan) => PLAN_TABLE[plan].rpm.toLocaleString('en-US') },
  ...CAP_NAMES.map((name) => ({
    label: capitalized(CAP_LABELS[name].replace(/ \(.*\)/, '')),
    // The organization's own caps (an operator may have set some apart from the plan's) in its plan's column.
    value: (plan: Plan, caps: Caps | null) => (caps ?? PLAN_TABLE[plan].caps)[name].toLocaleString('en-US'),
  })),
];

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * The free trial, where every "no plan" refusal sends people (SUBSCRIPTION_REQUIRED names this page): the
 * button for owners and admins, who they are for everyone else, and its end date while it runs.
 */
const TrialOffer: FC<PlansPageProps> = ({ access, trial, user }) => {
  const plan = PLAN_TABLE[TRIAL.plan];
  if (access.organization.plan) {
    return trial.endsAt ? (
      <div class="notice info" role="status">
        <strong>Free trial</strong> until {trial.endsAt.slice(0, 10)}: the {plan.name} plan and its credit. Choose a plan before then to keep metered calls working.
      </div>
    ) : null;
  }
  if (!trial.available) {
    return (
      <div class="notice warn" role="status">
        <strong>No plan yet</strong>, and this organization's free trial was used: metered calls are refused until a plan is chosen.
      </div>
    );
  }
  return (
    <section class="card">
      <h2>Free trial</h2>
      <p>
        The {plan.name} plan with {formatCents(plan.allowanceCents)} of credit for {TRIAL.days} days, once per organization. No card needed.
      </p>
      {canManage(access.role) ? (
        <TrialStart organizationId={access.organization.id} user={user} />
      ) : (
        <p class="muted small">Owners and admins of {access.organization.name} can start it.</p>
      )}
    </section>
  );
};

/**
 * The paid subscription, for owners and admins: it renews monthly until cancelled, and a cancelled one keeps the plan to
 * the end of the month paid for (Stripe then ends it, and the webhook the plan), which "Keep" undoes until then.
 */
const Subscription: FC<PlansPageProps> = ({ access, subscription }) => {
  const plan = access.organization.plan;
  if (!subscription || !plan) return null;
  const renewal = `/api/organizations/${access.organization.id}/billing/renewal`;
  const name = PLAN_TABLE[plan].name;
  return (
    <section class="card">
      <h2>Subscription</h2>
      {subscription.endsAt ? (
        <div class="row">
          <p class="grow">
            The {name} plan <strong>ends on {subscription.endsAt.slice(0, 10)}</strong> and does not renew. Until then it and its credit work as now; after, metered calls need a plan again.
          </p>
          <button type="button" class="secondary" data-api={renewal} data-method="PUT" data-body={JSON.stringify({ renews: true })} data-then="reload">
            {`Keep ${name}`}
          </button>
        </div>
      ) : (
        <div class="row">
          <p class="grow">The {name} plan renews every month through Stripe. Choosing another plan below replaces it, its unused days credited.</p>
          <button
            type="button"
            class="danger"
            data-api={renewal}
            data-method="PUT"
            data-body={JSON.stringify({ renews: false })}
            data-then="reload"
            data-confirm={`Cancel the ${name} plan? It stays, with its credit, until the end of the month paid for, and is not charged again; after that metered calls need a plan. You can keep it until then.`}
            data-confirm-label="Cancel plan"
          >
            Cancel plan
          </button>
        </div>
      )}
    </section>
  );
};

export const PlansPage: FC<PlansPageProps> = (props) => {
  const { access, caps, billing } = props;
  const manager = canManage(access.role);
  const current = access.organization.plan;
  return (
    <>
      <PageHead title="Plans" lede={<>{access.organization.name} is on {current ? <strong>{PLAN_TABLE[current].name}</strong> : <strong>no plan</strong>}.</>} />
      <TrialOffer {...props} />
      {billing && manager ? <Subscription {...props} /> : null}
      {billing ? (
        manager ? (
          <section class="card">
            <h2>Buy credit</h2>
            <ApiForm class="row" api={`/api/organizations/${access.organization.id}/billing/top-up`} then="redirect">
              <Field name="amountCents" label="Amount in cents" type="number" hint="500 to 100,000 cents; paid through Stripe, never expires." />
              <button type="submit">Continue to payment</button>
            </ApiForm>
          </section>
        ) : (
          <p class="notice info">Owners and admins choose the plan and buy credit.</p>
        )
      ) : (
        <div class="notice info" role="status">
          Paying by card is not configured on this installation: an operator sets the plan (<code>{props.planCommand}</code>).
        </div>
      )}
      <section class="card">
        <h2>Compare</h2>
        <p class="muted small">Credit included is a monthly allowance spent before purchased balance; it does not roll over. Only successful calls are charged.</p>
        <div class="table-wrap">
          <table class="compare">
            <thead>
              <tr>
                <th scope="col">
                  <span class="visually-hidden">Term</span>
                </th>
                {PLANS.map((plan) => (
                  <th scope="col" class={plan === current ? 'num current' : 'num'} data-plan={plan}>
                    {PLAN_TABLE[plan].name}
                    {plan === current ? <span class="badge ok">current</span> : null}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {TERMS.map(({ label, value }) => (
                <tr>
                  <th scope="row">{label}</th>
                  {PLANS.map((plan) => (
                    <td class={plan === current ? 'num current' : 'num'}>{value(plan, plan === current ? caps : null)}</td>
                  ))}
                </tr>
              ))}
              {billing && manager ? (
                <tr>
                  <th scope="row">
                    <span class="visually-hidden">Subscribe</span>
                  </th>
                  {PLANS.map((plan) => (
                    <td class={plan === current ? 'num current' : 'num'}>
                      {plan !== current && plan !== 'payg' ? (
                        <button type="button" class="secondary small" data-api={`/api/organizations/${access.organization.id}/billing/checkout`} data-body={JSON.stringify({ plan })} data-then="redirect">
                          {`Choose ${PLAN_TABLE[plan].name}`}
                        </button>
                      ) : null}
                    </td>
                  ))}
                </tr>
              ) : null}
            </tbody>
          </table>
        </div>
      </section>
    </>
  );
};

export const plansPage = workspacePage({
  id: 'plans',
  title: 'Plans',
  icon: 'M3 7h18v12H3zM3 11h18M7 15h3',
  load: async (c, { access, urls }) => {
    const [terms, trial, paying] = await Promise.all([
      termsOf(c.env.DB, access.organization.id),
      trialState(c.env.DB, access.organization.id),
      c.env.DB.prepare('SELECT stripe_subscription_id AS id, plan_cancels_at AS endsAt FROM organizations WHERE id = ?').bind(access.organization.id).first<{ id: string | null; endsAt: string | null }>(),
    ]);
    const where = urls.base === OPS_DEFAULT_URL ? '' : `SLUICE_OPS_URL=${urls.base} `;
    return {
      caps: terms.caps,
      billing: stripeOf(c.env) !== null,
      trial,
      subscription: paying?.id ? { endsAt: paying.endsAt } : null,
      planCommand: `${where}npm run -s ops -- plan set --org ${access.organization.id} --plan team`,
    };
  },
  view: PlansPage,
});
