import type { FC } from 'hono/jsx';
import type { z } from '@hono/zod-openapi';
import { OPERATIONS } from '../../operations';
import type { Operation } from '../../core/operation';
import { missingSettingsHere } from '../operation-settings';
import { isEnded, listJobs, type JobView, viewOf } from '../../services/jobs/store';
import { type Connection, listConnections } from '../../services/connections';
import { type Database, listDatabases } from '../../services/databases';
import { DASHBOARD_JOBS } from '../api/jobs';
import { ConfirmButton, DateTime, formatCents, PageHead } from './layout';
import { JOB_STATUS_BADGE, jobReason, jobStatusLabel } from './job-status';
import { type Column, DataTable } from './table';
import { type WorkspaceProps, workspacePage } from './page';

/** An operation a job may run, with the input fields a CSV's columns are mapped to. */
export interface JobOperation {
  name: string;
  fields: { name: string; required: boolean }[];
  /** The settings this installation lacks to run it (operation-settings.ts); empty when it can. */
  needs: readonly string[];
}

export interface JobsPageProps extends WorkspaceProps {
  jobs: JobView[];
  operations: JobOperation[];
  /** What a job may run through (the workspace's connections) and write into (its databases). */
  connections: Connection[];
  databases: Database[];
}

/** The operations of /v1/data a job can run ('<slug>/<operation>'), each with its input's top-level fields and what this installation lacks to run it. */
function jobOperations(missingOf: ((operation: Operation) => readonly string[]) | null): JobOperation[] {
  return OPERATIONS.filter((operation) => operation.paths.some((path) => path.startsWith('/v1/data/')))
    .map((operation) => {
      const shape = (operation.input as unknown as { shape?: Record<string, z.ZodTypeAny> }).shape ?? {};
      return {
        name: `${operation.platform}/${operation.name}`,
        fields: Object.entries(shape).map(([name, schema]) => ({ name, required: !schema.isOptional() })),
        needs: missingOf?.(operation) ?? [],
      };
    })
    .filter((operation) => operation.fields.length > 0)
    .sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The jobs table's columns. The progress bar, figures and status carry data-* hooks the page's script updates
 * while a job runs; a job's vendor account and database are named, their ids kept for the ones since removed.
 */
function jobColumns(connections: Connection[], databases: Database[], plans: string, keys: string): Column<JobView>[] {
  const connectionName = (id: string) => connections.find((connection) => connection.id === id)?.name ?? id;
  const databaseName = (id: string) => databases.find((database) => database.id === id)?.name ?? id;
  return [
    {
      label: 'Job',
      cell: (job) => (
        <>
          {job.name ?? <span class="muted">Untitled</span>}
          <br />
          <code class="small muted">{job.operation}</code>
          {job.connectionId ? <div class="muted small">{`through ${connectionName(job.connectionId)}`}</div> : null}
          {job.into ? <div class="muted small">{`into ${job.into.table} in database ${databaseName(job.into.databaseId)}`}</div> : null}
          <div class="muted small">
            <DateTime iso={job.createdAt} />
          </div>
        </>
      ),
    },
    {
      label: 'Status',
      cell: (job) => (
        <>
          <span class={JOB_STATUS_BADGE[job.status]} data-job-status>
            {jobStatusLabel(job.status, job.waitingOn)}
          </span>
          <div class="muted small" data-job-reason>
            {jobReason(job.reason, job.waitingOn)}
          </div>
          {/* The way out of a wait that fits it: credit or a plan for money, the API keys page for the key's own limit. */}
          <a class="small" href={plans} data-job-money hidden={job.waitingOn !== 'money' && job.waitingOn !== 'plan'}>
            Buy credit or change the plan
          </a>
          <a class="small" href={keys} data-job-limit hidden={job.waitingOn !== 'key_limit'}>
            Raise the key's monthly limit
          </a>
        </>
      ),
    },
    {
      label: 'Progress',
      class: 'job-progress',
      cell: (job) => {
        const done = job.counts.succeeded + job.counts.failed;
        const percent = job.counts.total === 0 ? 100 : Math.floor((done / job.counts.total) * 100);
        return (
          <>
            <progress max={job.counts.total} value={done} data-job-bar aria-label={`Progress of ${job.name ?? job.id}`}></progress>
            <div class="small">
              <span data-job-percent>{`${percent} %`}</span>
              <span class="muted" data-job-counts>{` · ${job.counts.succeeded} succeeded, ${job.counts.failed} failed, ${job.counts.pending} pending of ${job.counts.total}`}</span>
            </div>
          </>
        );
      },
    },
    {
      label: 'Spent',
      class: 'num nowrap',
      cell: (job) => (
        <>
          <span data-job-spent>{formatCents(job.spentCents)}</span>
          <div class="muted small" title="The quote: the most the job can cost. Only successful items are charged, each at what it was.">{`of at most ${formatCents(job.quotedCents)}`}</div>
        </>
      ),
    },
  ];
}

/** A job's buttons: its results as CSV while they are kept, and Cancel until it ends. */
const JobActions: FC<{ job: JobView; base: string }> = ({ job, base }) => (
  <div class="actions">
    {job.resultsDeleted ? (
      <span class="muted small" title={`Results are kept 30 days after a job ends`}>
        Results deleted
      </span>
    ) : (
      <a class="button secondary small" href={`${base}/${job.id}/results.csv`} download={`${job.id}.csv`} aria-label={`Download the results of ${job.name ?? job.id} as CSV`}>
        CSV
      </a>
    )}
    {isEnded(job.status) ? null : (
      <ConfirmButton api={`${base}/${job.id}/cancel`} confirm="Cancel this job? Items not started are never run nor charged." confirmLabel="Cancel job" ariaLabel={`Cancel ${job.name ?? job.id}`}>
        Cancel
      </ConfirmButton>
    )}
  </div>
);

/** The workspace's data jobs, live while they run; a new one from an uploaded CSV whose columns are mapped to the operation's fields. */
export const JobsPage: FC<JobsPageProps> = ({ jobs, operations, connections, databases, access }) => {
  const base = `/api/workspaces/${access.workspace.id}/jobs`;
  return (
    <>
      <PageHead
        title="Jobs"
        lede={
          <>
            One operation over up to 10,000 inputs, run in the background at the pace of {access.workspace.name}'s rate window. Each item is billed as its own call, only if it succeeds.
          </>
        }
      />
      <section class="card">
        <h2>Jobs</h2>
        <DataTable
          rows={jobs}
          empty="No job yet. Start one below from a CSV."
          attributes={{ 'data-jobs': base }}
          rowAttributes={(job) => ({ 'data-job-id': job.id, 'data-job-active': isEnded(job.status) ? undefined : '' })}
          columns={jobColumns(connections, databases, `/w/${access.workspace.id}/plans`, `/w/${access.workspace.id}/keys`)}
          actions={(job) => <JobActions job={job} base={base} />}
        />
      </section>
      <section class="card">
        <h2>Start a job from a CSV</h2>
        <form class="stack" novalidate data-job-form={base}>
          <p class="form-error" role="alert"></p>
          <div class="field">
            <label for="field-job-operation">Operation</label>
            <select id="field-job-operation" name="operation" data-job-operations={JSON.stringify(operations)}>
              {operations.map((operation) => (
                // Said beside its name while this installation lacks its settings: submitted without a vendor account
                // (which brings its own credentials) it is refused at once.
                <option value={operation.name}>{operation.needs.length > 0 ? `${operation.name} (needs ${operation.needs.join(', ')} or a vendor account)` : operation.name}</option>
              ))}
            </select>
            <span class="field-error" data-field-error="operation"></span>
          </div>
          <div class="field">
            <label for="field-job-file">CSV file</label>
            <input id="field-job-file" name="file" type="file" accept=".csv,text/csv" />
            <span class="hint">The first row names the columns; each further row is one input.</span>
            <span class="field-error" data-field-error="inputs"></span>
          </div>
          <fieldset class="tool-group" data-job-mapping hidden>
            <legend>Columns to fields</legend>
            <p class="muted small" data-job-preview></p>
            <div class="job-fields" data-job-fields></div>
          </fieldset>
          <div class="field">
            <label for="field-job-connection">Vendor account</label>
            <select id="field-job-connection" name="connectionId">
              <option value="">Sluice's accounts (the operation's price)</option>
              {connections.map((connection) => (
                <option value={connection.id}>{`${connection.name} (${connection.vendor} ${connection.hint}, the plan's fee)`}</option>
              ))}
            </select>
            <span class="hint">A vendor account runs every row with the workspace's own credentials; its vendor must serve the operation.</span>
            <span class="field-error" data-field-error="connectionId"></span>
          </div>
          <div class="field">
            <label for="field-job-database">Write results into</label>
            <select id="field-job-database" name="databaseId">
              <option value="">Nowhere (download them as CSV)</option>
              {databases.map((database) => (
                <option value={database.id}>{`database ${database.name}`}</option>
              ))}
            </select>
            <span class="field-error" data-field-error="into.databaseId"></span>
          </div>
          <div class="field" data-into-table hidden>
            <label for="field-job-table">Table</label>
            <input id="field-job-table" name="table" type="text" maxlength={64} placeholder="results" />
            <span class="hint">Created if missing; one row per success with its input and data as JSON.</span>
            <span class="field-error" data-field-error="into.table"></span>
          </div>
          <div class="field grow">
            <label for="field-job-name">Name</label>
            <input id="field-job-name" name="name" type="text" maxlength={200} placeholder="Q4 enrichment" />
            <span class="field-error" data-field-error="name"></span>
          </div>
          <button type="submit">Start job</button>
        </form>
      </section>
    </>
  );
};

export const jobsPage = workspacePage<JobsPageProps>({
  id: 'jobs',
  title: 'Jobs',
  icon: 'M4 6h16M4 12h10M4 18h6M17 14l3 3-3 3',
  load: async (c, { access }) => ({
    jobs: (await listJobs(c.env.DB, access.workspace.id, DASHBOARD_JOBS, null)).map(viewOf),
    operations: jobOperations(await missingSettingsHere(c.env)),
    connections: await listConnections(c.env.DB, access.workspace.id),
    databases: await listDatabases(c.env.DB, access.workspace.id),
  }),
  view: JobsPage,
});
