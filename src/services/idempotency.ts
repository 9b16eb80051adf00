import { HOLD_GRACE_MS } from '../core/protocols/gate';
import type { ClaimAnswer } from '../core/protocols/idempotency';
import { operationIdThrough, type Operation } from '../core/operation';
import type { Env } from '../core/config';
import { canonicalize, sha256Hex } from '../core/digest';
import type { Meta } from '../core/envelope';
import { type AnswerGone, ApiError, type ErrorDetail, type ErrorLocation } from '../core/errors';
import { unitsFromCents } from '../core/money';
import { chargeOfCall } from './call-charges';

/** The request header (REST) and the `_meta` member of a tool call (MCP) that carry a key. */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const IDEMPOTENCY_KEY_MCP_FIELD = 'idempotency_key';
/** Sent, as `true`, on an answer that replays an earlier call's (the header Stripe sends). */
export const REPLAYED_HEADER = 'Idempotent-Replayed';
/** The largest answer kept for replays, as JSON text: the size of the largest request this API reads. */
export const MAX_KEPT_ANSWER_BYTES = 1_048_576;
/** 1 to 255 printable ASCII characters, as Stripe takes them (a UUID, a hash, a job id and a step...). */
const KEY_SHAPE = /^[\x20-\x7e]{1,255}$/;
/** Seconds a retry is told to wait while the first call runs: model answers take up to 95 s, the rest a few. */
const RUNNING_RETRY_AFTER_S = { short: 1, long: 5 };
const LONG_CALL_MS = 30_000;
/** How long past its time limit a call may take to settle and keep its answer before it counts as lost. */
const SETTLING_MS = 5_000;

/** A key as the caller sent it, and where, so a refusal names the very field. */
export interface SentIdempotencyKey {
  value: unknown;
  field: string;
  location: ErrorLocation;
}

/**
 * The spec's `details[].location` is query, path or body: a header is none of them, so it is reported as
 * `query` (the request's own metadata, not its content), under the header's name, which no query field has.
 */
export function idempotencyKeyFromHeader(value: string | undefined): SentIdempotencyKey | undefined {
  return value === undefined ? undefined : { value, field: IDEMPOTENCY_KEY_HEADER, location: 'query' };
}

/** From a tool call's `_meta`: MCP has no request headers of its own per call. */
export function idempotencyKeyFromMcpMeta(meta: unknown): SentIdempotencyKey | undefined {
  if (typeof meta !== 'object' || meta === null || !(IDEMPOTENCY_KEY_MCP_FIELD in meta)) return undefined;
  return { value: (meta as Record<string, unknown>)[IDEMPOTENCY_KEY_MCP_FIELD], field: `_meta.${IDEMPOTENCY_KEY_MCP_FIELD}`, location: 'body' };
}

/** The key, or why it is refused. Taken as sent: a structured-field string's quotes are part of it. */
export function readIdempotencyKey(sent: SentIdempotencyKey): { key: string } | { problem: ErrorDetail } {
  if (typeof sent.value === 'string' && KEY_SHAPE.test(sent.value)) return { key: sent.value };
  return { problem: { field: sent.field, location: sent.location, message: 'Must be 1 to 255 printable ASCII characters.' } };
}

/** The key sent, if any: undefined when none was, 400 VALIDATION_ERROR naming where it was sent when it is malformed. */
export function sentIdempotencyKey(sent: SentIdempotencyKey | undefined): string | undefined {
  if (!sent) return undefined;
  const read = readIdempotencyKey(sent);
  if ('problem' in read) throw ApiError.validation([read.problem]);
  return read.key;
}

/** What a success answered, as kept for its retries. */
export interface KeptAnswer {
  data: unknown;
  message?: string;
  meta: Meta;
}

export type Claim =
  | { kind: 'replay'; answer: KeptAnswer }
  | { kind: 'refused'; error: ApiError }
  | { kind: 'claimed'; callId: string; keep(answer: KeptAnswer): Promise<void>; giveBack(mayBeCharged: boolean): Promise<void> };

/**
 * Claims a key for one call of `operation` with `input`, scoped to the workspace. A first call is told
 * to run and then to keep its answer or give the key back; a retry gets the kept answer or the refusal.
 */
export async function claimIdempotencyKey(
  env: Env,
  owner: { organizationId: string; workspaceId: string },
  key: string,
  operation: Operation,
  input: unknown,
  timeLimitMs: number,
  callId: string,
  connectionId?: string,
): Promise<Claim> {
  const store = env.IDEMPOTENCY_STORE.get(env.IDEMPOTENCY_STORE.idFromName(owner.workspaceId));
  const digest = await sha256Hex(`${operationIdThrough(operation, connectionId)}\n${JSON.stringify(canonicalize(input))}`);
  const answer: ClaimAnswer = await store.claim(key, digest, timeLimitMs + HOLD_GRACE_MS, callId);
  switch (answer.kind) {
    case 'replay':
      return { kind: 'replay', answer: JSON.parse(answer.answer) as KeptAnswer };
    case 'claimed': {
      // A first call begun long ago that was charged cannot run again as itself: the wallet may have folded its
      // capture, so it would be charged twice. Its answer is gone with its process; the key says so from now on.
      const charged = answer.lateTakeover ? await chargeOfCall(env, owner, answer.callId) : null;
      if (charged !== null) {
        await store.complete(key, digest, null, 0, charged);
        return gone(LOST_ANSWER, { costUnits: charged, answerBytes: 0 });
      }
      return {
        kind: 'claimed',
        callId: answer.callId,
        keep: async (kept) => {
          const text = JSON.stringify(kept);
          const bytes = new TextEncoder().encode(text).byteLength;
          await store.complete(key, digest, bytes <= MAX_KEPT_ANSWER_BYTES ? text : null, bytes, unitsFromCents(kept.meta.costCents));
        },
        // A call whose id may carry a success: a dead call's, taken over by this retry, or this call's own when
        // the gate did not answer its success's settle (`mayBeCharged`). Were it charged, a new call's id would
        // have the next retry charged again, so the id stays with the key. Were it not, the id goes, or this
        // failure's usage row (which holds it) would hide the next success's from the gate and D1 as its twin.
        // Unread (the wallet unreachable), the claim stays until it lapses, and the next retry takes it over.
        giveBack: async (mayBeCharged) => {
          const tookOver = answer.callId !== callId;
          await store.release(key, digest, (tookOver || mayBeCharged) && (await chargeOfCall(env, owner, answer.callId)) !== null);
        },
      };
    }
    case 'mismatch':
      return refused(`This ${IDEMPOTENCY_KEY_HEADER} was first used for another operation or input. A key names one call: send a new key for a different call.`);
    case 'running': {
      const lapsesIn = Math.ceil(answer.lapsesInMs / 1000);
      // A call cannot run past its time limit: once it has, and had time to settle, it was lost (its process
      // died), and nothing happens until its claim lapses. Asking every second until then would only add
      // refusals (a data job's item retried after a crash: one usage row a second for a minute).
      if (answer.lapsesInMs <= HOLD_GRACE_MS - SETTLING_MS) {
        return refused(
          `The first call with this ${IDEMPOTENCY_KEY_HEADER} ran past its time limit without an answer: it was lost. Retry in ${lapsesIn} s, when its claim lapses, to run it again; this request was not charged.`,
          lapsesIn,
        );
      }
      const retryAfter = Math.min(timeLimitMs > LONG_CALL_MS ? RUNNING_RETRY_AFTER_S.long : RUNNING_RETRY_AFTER_S.short, lapsesIn);
      return refused(`The first call with this ${IDEMPOTENCY_KEY_HEADER} is still running. Retry in ${retryAfter} s to receive its answer; this request was not charged.`, retryAfter);
    }
    case 'unkept': {
      const { answerBytes, costUnits } = answer;
      const message =
        answerBytes === 0
          ? LOST_ANSWER
          : `The first call with this ${IDEMPOTENCY_KEY_HEADER} succeeded and was charged, but its answer (${answerBytes} bytes) was too large to keep for replays, so it cannot be sent again. Send a new key to run the call again.`;
      return gone(message, { costUnits, answerBytes });
    }
  }
}

const LOST_ANSWER = `The first call with this ${IDEMPOTENCY_KEY_HEADER} succeeded and was charged, but its answer was lost before it could be kept (the server stopped during the call), so it cannot be sent again. Send a new key to run the call again; this request was not charged.`;

function refused(message: string, retryAfter?: number): Claim {
  return { kind: 'refused', error: new ApiError('CONFLICT', message, retryAfter === undefined ? {} : { retryAfter }) };
}

/** A retry of a first call that was charged and whose answer is gone: refused like any conflict, with what it was charged. */
function gone(message: string, answerGone: AnswerGone): Claim {
  return { kind: 'refused', error: new ApiError('CONFLICT', message, { answerGone }) };
}

/** A kept answer as a retry receives it: the first call's data and meta, marked as a replay. */
export function replayOf(answer: KeptAnswer): KeptAnswer & { headers: Record<string, string> } {
  return { ...answer, meta: { ...answer.meta, replayed: true }, headers: { [REPLAYED_HEADER]: 'true' } };
}
