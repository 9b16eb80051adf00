import type { FC } from 'hono/jsx';
import type { Agent, AgentAllowance } from '../../services/agents';
import { PLAN_TABLE } from '../../core/plans';
import { canManage } from '../members';
import { TRIAL } from '../trial';
import { ApiForm, CodeBlock, ConfirmButton, DateTime, Field, PageHead } from './layout';
import { DataTable } from './table';
import { Stat } from './usage';
import { agentAllowance, listAgents } from '../../services/agents';
import { trialState } from '../trial';
import { type WorkspaceProps, workspacePage } from './page';
import { TrialStart } from './trial-start';

export interface AgentsPageProps extends WorkspaceProps {
  agents: Agent[];
  allowance: AgentAllowance;
  apiUrl: string;
  trial: { available: boolean; endsAt: string | null };
}

const KEY_NOTE = 'Give it to the agent as SLUICE_AGENT_KEY. It is shown this once and works on /runtime/* only; to replace it, stop the agent and deploy it again.';

/** Deployed agents of the workspace: each with a key of its own for the runtime surface, and the organization's caps. */
export const AgentsPage: FC<AgentsPageProps> = (props) => {
  const { agents, allowance, access, user, apiUrl } = props;
  const of = (limit: number | null) => (limit === null ? 'no plan' : `of ${limit}`);
  return (
    <>
      <PageHead
        title="Agents"
        lede={
          <>
            An agent runs on your own infrastructure and calls <code>{apiUrl}/runtime/*</code> with a key of its own: the operations of <code>/v1/data</code>, billed to{' '}
            {access.organization.name}. Runtime hours count the clock hours (UTC) in which an agent made a call.
          </>
        }
      />
      <DeployGateNotice {...props} />
      <div class="grid" aria-label={`Agents of ${access.organization.name}`}>
        <Stat label="Deployed agents" value={String(allowance.deployed)} note={`${of(allowance.agentsLimit)} in the organization`} />
        <Stat label="Runtime hours this month" value={String(allowance.runtimeHours)} note={<>{`${of(allowance.runtimeHoursLimit)}, starts again `}<span class="nowrap">{allowance.monthEndsAt.slice(0, 10)}</span></>} />
      </div>
      <section class="card">
        <h2>Deploy an agent</h2>
        <ApiForm class="row" api={`/api/workspaces/${access.workspace.id}/agents`} then="secret" secretTitle="Your agent's key" secretNote={KEY_NOTE}>
          <Field name="name" label="Agent name" placeholder="e.g. lead researcher" maxlength={100} />
          <Field name="description" label="What it does (optional)" required={false} maxlength={500} placeholder="e.g. finds companies every morning" />
          <button type="submit">Deploy agent</button>
        </ApiForm>
      </section>
      <section class="card">
        <h2>Agents</h2>
        <DataTable
          rows={agents}
          empty="No agent yet."
          rowAttributes={(agent) => ({ class: agent.status === 'stopped' ? 'revoked' : undefined, 'data-agent-id': agent.id })}
          columns={[
            {
              label: 'Name',
              cell: (agent) => (
                <>
                  {agent.name}
                  {agent.description ? <div class="muted small">{agent.description}</div> : null}
                </>
              ),
            },
            { label: 'Status', cell: (agent) => (agent.status === 'deployed' ? <span class="badge ok">Deployed</span> : <span class="badge off">Stopped</span>) },
            { label: 'Key', cell: (agent) => (agent.keyHint ? <code>{agent.keyHint}</code> : '—') },
            {
              label: 'Deployed',
              cell: (agent) =>
                agent.status === 'deployed' ? (
                  <DateTime iso={agent.deployedAt} />
                ) : (
                  <>
                    stopped <DateTime iso={agent.stoppedAt} />
                  </>
                ),
            },
            { label: 'Hours this month', class: 'num', cell: (agent) => agent.runtimeHoursThisMonth },
          ]}
          actions={(agent) => {
            const mayManage = agent.createdBy === user.id || canManage(access.role);
            return (
              <>
                {mayManage && agent.status === 'deployed' ? (
                  <ConfirmButton
                    api={`/api/agents/${agent.id}/stop`}
                    confirm={`Stop "${agent.name}"? Its key is refused from the very next call; deploying it again mints a new key.`}
                    confirmLabel="Stop agent"
                    ariaLabel={`Stop agent ${agent.name}`}
                  >
                    Stop
                  </ConfirmButton>
                ) : null}
                {mayManage && agent.status === 'stopped' ? (
                  <button
                    type="button"
                    class="secondary small"
                    data-api={`/api/agents/${agent.id}/deploy`}
                    data-then="secret"
                    data-secret-title="Your agent's new key"
                    data-secret-note={KEY_NOTE}
                    aria-label={`Deploy again: agent ${agent.name}`}
                  >
                    Deploy again
                  </button>
                ) : null}
              </>
            );
          }}
        />
      </section>
      <section class="card">
        <h2>Call the runtime</h2>
        <p class="muted small">
          The same operations, inputs and prices as <code>/v1/data/&lt;slug&gt;/&lt;operation&gt;</code> (see <a href={`${apiUrl}/v1/platforms`}>the catalog</a>), with the agent's key:
        </p>
        <CodeBlock>
          <code>{`curl -s ${apiUrl}/runtime/agent \\\n  -H "Authorization: Bearer $SLUICE_AGENT_KEY"\ncurl -s "${apiUrl}/runtime/data/linkedin/get-company-by-domain?domain=stripe.com" \\\n  -H "Authorization: Bearer $SLUICE_AGENT_KEY"`}</code>
        </CodeBlock>
      </section>
    </>
  );
};

/** Deploying needs a plan or the free trial (402 DEPLOY_GATE_FAILED otherwise): said before anyone tries. */
const DeployGateNotice: FC<AgentsPageProps> = ({ access, trial, user }) => {
  if (access.organization.plan) return null;
  return (
    <div class="notice warn" role="status">
      <strong>No plan yet.</strong> Deploying an agent needs a plan or the free trial.{' '}
      {trial.available && canManage(access.role) ? (
        <>
          Start the free trial: the {PLAN_TABLE[TRIAL.plan].name} plan, {PLAN_TABLE[TRIAL.plan].caps.agents} agents and {PLAN_TABLE[TRIAL.plan].caps.runtimeHours} runtime hours a month, for {TRIAL.days} days.{' '}
          <TrialStart organizationId={access.organization.id} user={user} small />
        </>
      ) : (
        <>
          See <a href={`/w/${access.workspace.id}/plans`}>Plans</a>.
        </>
      )}
    </div>
  );
};

export const agentsPage = workspacePage({
  id: 'agents',
  title: 'Agents',
  icon: 'M12 3v3M7 6h10a3 3 0 0 1 3 3v7a3 3 0 0 1-3 3H7a3 3 0 0 1-3-3V9a3 3 0 0 1 3-3zM9 12h.01M15 12h.01M9 16h6',
  load: async (c, { access, urls }) => {
    const [agents, allowance, trial] = await Promise.all([listAgents(c.env.DB, access.workspace.id), agentAllowance(c.env.DB, access.organization.id), trialState(c.env.DB, access.organization.id)]);
    return { agents, allowance, apiUrl: urls.base, trial };
  },
  view: AgentsPage,
});
