export type ClaimAnswer =
  /**
   * The key is new (or its first call died without an answer): this call runs and must complete or release it,
   * as `callId`: the first call's id when it died, so that if it was charged before it died, the wallet's ledger
   * and the usage table (both keyed by that id) take this call's charge and row as the same call's, once.
   */
  | {
      kind: 'claimed';
      callId: string;
      /**
       * Set when this call takes over a first call begun so long ago (half the wallet's `LEDGER_DETAIL_MS` or
       * more) that the wallet may no longer know its capture by id: were that call charged, this one would be
       * charged again. The caller looks for its charged usage row before it runs (services/idempotency.ts).
       */
      lateTakeover?: true;
    }
  /** The first call succeeded: its answer, as the JSON text the pipeline stored. */
  | { kind: 'replay'; answer: string }
  /** The first call has no answer yet; its claim lapses (the call presumed dead) in `lapsesInMs`. */
  | { kind: 'running'; lapsesInMs: number }
  /** The key was first used for another operation or input. */
  | { kind: 'mismatch' }
  /**
   * The first call succeeded and was charged, but its answer was too big to keep, or (`answerBytes` 0) it was
   * lost: the call's process died before keeping it, and the retry came after the wallet's detail of it.
   * `costUnits`: what it was charged (0 in a store from before this was kept).
   */
  | { kind: 'unkept'; answerBytes: number; costUnits: number };


/**
 * What the pipeline asks a workspace's idempotency store (durable-objects/idempotency-store.ts), reached only
 * by calls that carry an Idempotency-Key. Each answer is atomic: of simultaneous calls with one key,
 * exactly one is told to run.
 */
export interface IdempotencyStoreProtocol extends Rpc.DurableObjectBranded {
  /** `callId`: the usage row (and hold) id this call will use if it is the first. */
  claim(key: string, digest: string, runningForMs: number, callId: string): ClaimAnswer;
  /** Keeps the first call's answer (null when it is too big to keep) and what it was charged; false when the claim was lost. */
  complete(key: string, digest: string, answer: string | null, answerBytes: number, costUnits: number): boolean;
  /** The call failed: the key is free for a retry, as a new call, or (`keepCall`) as this same call again. */
  release(key: string, digest: string, keepCall?: boolean): void;
}
