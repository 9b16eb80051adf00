import type { Env } from '../core/config';
import type { NightlyMessage, PruneName } from '../core/protocols/nightly';
import { PruningBudget } from '../core/pruning';
import { pruneSnapshots } from '../providers/builtin-web/change-tracking';
import { pruneJobResults } from '../services/jobs/store';
import { reviveStrandedJobs } from '../services/jobs/resume';
import { pruneEndedRecords } from '../services/record-retention';
import { pruneUsage } from '../services/usage-retention';
import { finishDeletedWorkspaces } from '../services/workspace-deletion';
import { hashPlainTrialInboxes } from '../services/trial-inboxes';
import { announceDailyUsage, sendDailyUsagePage, startDailyUsage } from '../services/webhooks/daily-usage';
import { forgetReplacedSecrets } from '../services/webhooks/endpoints';

/** Each prune, run within one budget of statements (PruningBudget). */
const PRUNES: Record<PruneName, (env: Env, budget: PruningBudget) => Promise<unknown>> = {
  usage: (env, budget) => pruneUsage(env.DB, undefined, budget),
  'job results': (env, budget) => pruneJobResults(env, undefined, budget),
  snapshots: (env, budget) => pruneSnapshots(env, undefined, budget),
  'ended records': (env, budget) => pruneEndedRecords(env.DB, undefined, budget),
};

/** A failed message waits this long before its next attempt, doubled each time, to at most an hour. */
const FIRST_RETRY_SECONDS = 60;
const LAST_RETRY_SECONDS = 60 * 60;

/**
 * The cron of wrangler.toml, shortly after midnight UTC: usage.daily started (its pages and reports are the
 * nightly queue's); usage rows, job results, snapshots and ended account records (sessions, OAuth grants and
 * clients, invitations…) past their retention pruned, each prune that spends its budget carried on by a message
 * to the queue until one ends with statements to spare; data jobs whose runs died, errored or cannot be found ended;
 * deleted workspaces whose sweep was cut short finished (services/workspace-deletion.ts); trial inboxes kept as
 * addresses rewritten as digests (services/trial-inboxes.ts); webhook secrets replaced by a rotation forgotten once they
 * no longer sign.
 * So no invocation's work grows with the number of workspaces, nor with what a night has to delete.
 */
export async function nightly(env: Env): Promise<void> {
  const prunes = (Object.keys(PRUNES) as PruneName[]).map((what) =>
    // A prune that fails here is handed to the queue, which retries it.
    prune(env, what).catch((error: unknown) => {
      console.error(JSON.stringify({ level: 'error', note: 'nightly prune failed; queued', what, error: String(error) }));
      return env.NIGHTLY.send({ kind: 'prune', what });
    }),
  );
  await Promise.all([
    startDailyUsage(env),
    ...prunes,
    reviveStrandedJobs(env),
    finishDeletedWorkspaces(env),
    hashPlainTrialInboxes(env.DB).catch((error: unknown) => {
      // Tried again the next night; its failing must not cut the rest of tonight's work short.
      console.error(JSON.stringify({ level: 'error', note: 'trial inboxes not rewritten tonight', error: String(error) }));
    }),
    forgetReplacedSecrets(env.DB).catch((error: unknown) => {
      console.error(JSON.stringify({ level: 'error', note: 'replaced webhook secrets not forgotten tonight', error: String(error) }));
    }),
  ]);
}

/** The nightly queue's consumer: each message acknowledged once done, or retried later on its own. */
export async function consumeNightly(env: Env, batch: MessageBatch<NightlyMessage>): Promise<void> {
  for (const message of batch.messages) {
    try {
      await handle(env, message.body);
      message.ack();
    } catch (error) {
      const delaySeconds = Math.min(FIRST_RETRY_SECONDS * 2 ** (message.attempts - 1), LAST_RETRY_SECONDS);
      console.error(JSON.stringify({ level: 'error', note: 'nightly work failed; retried', ...message.body, attempt: message.attempts, retryInSeconds: delaySeconds, error: String(error) }));
      message.retry({ delaySeconds });
    }
  }
}

function handle(env: Env, message: NightlyMessage): Promise<void> {
  switch (message.kind) {
    case 'usage.daily page':
      return sendDailyUsagePage(env, message.day, message.after);
    case 'usage.daily':
      return announceDailyUsage(env, message.workspaceId, message.day);
    case 'prune':
      return prune(env, message.what);
  }
}

/** One run of a prune; when it spent its budget there may be more, and a message runs it again. */
async function prune(env: Env, what: PruneName): Promise<void> {
  const budget = new PruningBudget();
  await PRUNES[what](env, budget);
  if (budget.spent) await env.NIGHTLY.send({ kind: 'prune', what });
}
