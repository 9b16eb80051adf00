import type { Admission } from '../core/protocols/gate';
import { clock } from '../core/clock';
import type { Env } from '../core/config';

/**
 * Workspaces whose window is exhausted, until the window ends. Once the object has said no, this isolate
 * says no by itself until the reset, so a flood never reaches the object. Bounded: expired entries are
 * dropped when the map grows.
 */
const exhaustedUntil = new Map<string, { limit: number; resetAt: number }>();
const MAX_REMEMBERED = 10_000;

/** Gate ids by workspace id (an id is plain data, unlike a stub), so a busy workspace's id is derived once. */
const gateIds = new Map<string, DurableObjectId>();

export function gateOf(env: Env, workspaceId: string) {
  let id = gateIds.get(workspaceId);
  if (!id) {
    if (gateIds.size >= MAX_REMEMBERED) gateIds.clear();
    id = env.WORKSPACE_GATE.idFromName(workspaceId);
    gateIds.set(workspaceId, id);
  }
  return env.WORKSPACE_GATE.get(id);
}

/** The refusal this isolate already knows for the workspace's current window, if any. */
export function knownExhausted(workspaceId: string): Admission | undefined {
  const exhausted = exhaustedUntil.get(workspaceId);
  if (!exhausted) return undefined;
  if (clock.now() < exhausted.resetAt) return { allowed: false, limit: exhausted.limit, remaining: 0, resetAt: exhausted.resetAt };
  exhaustedUntil.delete(workspaceId);
  return undefined;
}

export function rememberExhausted(workspaceId: string, admission: Admission): void {
  const now = clock.now();
  if (exhaustedUntil.size >= MAX_REMEMBERED) {
    for (const [id, entry] of exhaustedUntil) if (entry.resetAt <= now) exhaustedUntil.delete(id);
  }
  if (exhaustedUntil.size < MAX_REMEMBERED) exhaustedUntil.set(workspaceId, { limit: admission.limit, resetAt: admission.resetAt });
}

/** Whole seconds until the window ends, at least 1. */
export function secondsUntilReset(admission: Admission): number {
  return Math.max(1, Math.ceil((admission.resetAt - clock.now()) / 1000));
}

/** The RateLimit-* headers every limited response carries. */
export function rateLimitHeaders(admission: Admission): Record<string, string> {
  return {
    'RateLimit-Limit': String(admission.limit),
    'RateLimit-Remaining': String(admission.remaining),
    'RateLimit-Reset': String(secondsUntilReset(admission)),
  };
}
