import { z } from '@hono/zod-openapi';
import { CATALOG } from '../operations/catalog';
import { nowIso } from '../core/clock';
import { type PublicUrls } from '../core/config';
import { newId } from '../core/ids';

const SLUGS = CATALOG.map((platform) => platform.slug) as [string, ...string[]];

/**
 * What an onboarding records: who is calling (the agent or client, and the person or organization behind
 * it when they say), and what for (the use case and the sources they mean to use). The same intent,
 * whether it arrives through the deprecated `POST /v1/register` or the MCP tool `sluice_onboarding`.
 */
export const OnboardingIntent = z
  .strictObject({
    agentName: z.string().trim().min(1).max(100).openapi({ description: 'The agent or client setting Sluice up, e.g. "Claude Code" or "my-crawler/1.2".', example: 'Claude Code' }),
    email: z.email().max(254).optional().openapi({ description: "The person's email, when known.", example: 'ada@example.com' }),
    organization: z.string().trim().min(1).max(200).optional().openapi({ description: "The person's organization, when known.", example: 'Analytical Engines Ltd' }),
    useCase: z.string().trim().min(1).max(2000).openapi({ description: 'What the data is for, in a sentence or two.', example: 'Track competitors\' rankings and backlinks every week.' }),
    sources: z
      .array(z.enum(SLUGS))
      .max(SLUGS.length)
      .default([])
      .openapi({ description: `Sources from GET /v1/platforms the caller plans to use: ${SLUGS.join(', ')}.`, example: ['seo', 'web'] }),
  })
  .openapi('OnboardingIntent');
export type OnboardingIntent = z.infer<typeof OnboardingIntent>;

export const OnboardingRecord = z
  .object({
    id: z.string(),
    recordedAt: z.string(),
    workspaceId: z.string().nullable().openapi({ description: 'The workspace of the credential sent, null without one.' }),
    next: z.object({
      signupUrl: z.string().openapi({ description: 'Where a person makes an account and a key (not needed when a key was sent).' }),
      mcpUrl: z.string(),
      agentSetupUrl: z.string(),
      docsUrl: z.string(),
      sources: z.array(z.object({ slug: z.string(), catalogUrl: z.string() })).openapi({ description: 'The catalog entry of each source named, with its operations and prices.' }),
    }),
  })
  .openapi('OnboardingRecord');
export type OnboardingRecord = z.infer<typeof OnboardingRecord>;

/** Who sent the intent: a workspace when a credential came with it. */
export interface OnboardingCaller {
  surface: 'register' | 'mcp';
  workspaceId: string | null;
  organizationId: string | null;
}

/**
 * Intents a workspace keeps: its newest. Each keyed call records one, and the calls are free (only the workspace's
 * window counts them), so without a bound one key could write 2.5 KB rows at its plan's rate for good.
 */
export const INTENTS_KEPT_PER_WORKSPACE = 20;

/**
 * Stores the intent and answers where to go next. A workspace's older intents past INTENTS_KEPT_PER_WORKSPACE go in
 * the same batch, by its index; an anonymous one is bounded by its address's throttle, and every one by the
 * daily run's retention (ENDED_RECORDS_KEPT_DAYS.onboardingIntent).
 */
export async function recordOnboarding(db: D1Database, urls: PublicUrls, intent: OnboardingIntent, caller: OnboardingCaller): Promise<OnboardingRecord> {
  const id = newId('onb');
  const recordedAt = nowIso();
  const sources = [...new Set(intent.sources)];
  const insert = db
    .prepare(
      `INSERT INTO onboarding_intents (id, surface, agent_name, email, organization_name, use_case, sources, workspace_id, organization_id, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(id, caller.surface, intent.agentName, intent.email ?? null, intent.organization ?? null, intent.useCase, JSON.stringify(sources), caller.workspaceId, caller.organizationId, recordedAt);
  if (caller.workspaceId === null) await insert.run();
  else {
    const trim = db
      .prepare(
        `DELETE FROM onboarding_intents WHERE rowid IN
           (SELECT rowid FROM onboarding_intents WHERE workspace_id = ? ORDER BY created_at DESC, rowid DESC LIMIT -1 OFFSET ?)`,
      )
      .bind(caller.workspaceId, INTENTS_KEPT_PER_WORKSPACE);
    await db.batch([insert, trim]);
  }
  return {
    id,
    recordedAt,
    workspaceId: caller.workspaceId,
    next: {
      signupUrl: urls.signup,
      mcpUrl: urls.mcp,
      agentSetupUrl: urls.agentSetup,
      docsUrl: urls.docs,
      sources: sources.map((slug) => ({ slug, catalogUrl: `${urls.base}/v1/platforms/${slug}` })),
    },
  };
}
