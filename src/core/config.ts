import type { ObjectBindings } from './object-bindings';
import type { NightlyMessage } from './protocols/nightly';
import type { WorkspaceDatabaseProtocol } from './protocols/database';
import type { WorkspaceGateProtocol } from './protocols/gate';
import type { IdempotencyStoreProtocol } from './protocols/idempotency';
import type { DataJobParams } from './protocols/job';
import type { OrgWalletProtocol } from './protocols/wallet';
import type { WebhookSenderProtocol } from './protocols/webhook-sender';

/**
 * Every setting an installation can give, with what it is for. `npm start` passes each of these from
 * the environment (over `.dev.vars`) to the workers; deployments set them as vars or secrets.
 */
export const SETTINGS = {
  BASE_URL: 'Public URL of the REST API (api worker).',
  TOOLS_BASE_URL: 'Public URL on which the web and SEO tool endpoints are shown at root paths (api worker).',
  MCP_URL: 'Public URL of the MCP endpoint, path /mcp.',
  APP_URL: 'Public URL of the dashboard.',
  KEY_ENCRYPTION_KEY: 'Secret: base64 of 32 random bytes; AES-GCM key that lets a key be re-revealed and webhook signing secrets be used, and the root of the password pepper: changing it makes every stored password fail. To rotate, set `<new>,<old>`: the first encrypts and peppers, each one is tried to read, and passwords are re-hashed under the first at sign-in.',
  OPS_TOKEN: 'Secret: bearer of the operator API /ops/v1; when unset that API does not exist.',
  BUILD_ID: 'The build served (a commit), shown by /health.',
  LINKEDIN_API_KEY: 'Secret: RapidAPI key of the professional-network data vendor.',
  LINKEDIN_API_HOST: 'RapidAPI host of the professional-network data vendor.',
  LINKEDIN_BASE_URL: 'Base URL of that vendor; default https://<LINKEDIN_API_HOST>.',
  YOUTUBE_API_KEY: 'Secret: YouTube Data API v3 key (Google Cloud) of the video-platform lookups.',
  YOUTUBE_BASE_URL: 'Base URL of the YouTube Data API; default https://www.googleapis.com/youtube/v3.',
  YTAPI_API_KEY: 'Secret: RapidAPI key of YT-API, the video-platform stream-link vendor.',
  YTAPI_API_HOST: 'RapidAPI host of YT-API (yt-api.p.rapidapi.com).',
  YTAPI_BASE_URL: 'Base URL of YT-API; default https://<YTAPI_API_HOST>.',
  TIKTOK_API_KEY: 'Secret: RapidAPI key of the short-video data vendor (TikTok Scraper).',
  TIKTOK_API_HOST: 'RapidAPI host of the short-video data vendor (tiktok-scraper7.p.rapidapi.com).',
  TIKTOK_BASE_URL: 'Base URL of that vendor; default https://<TIKTOK_API_HOST>.',
  X_API_KEY: 'Secret: RapidAPI key of the microblog data vendor (Twitter API45).',
  X_API_HOST: 'RapidAPI host of the microblog data vendor (twitter-api45.p.rapidapi.com).',
  X_BASE_URL: 'Base URL of that vendor; default https://<X_API_HOST>.',
  TWITTER283_API_KEY: 'Secret: RapidAPI key of Twitter283, the microblog post-translation vendor.',
  TWITTER283_API_HOST: 'RapidAPI host of Twitter283 (twitter283.p.rapidapi.com).',
  TWITTER283_BASE_URL: 'Base URL of Twitter283; default https://<TWITTER283_API_HOST>.',
  XAI_API_KEY: 'Secret: xAI API key (Grok with X search: the microblog assistant answer).',
  XAI_BASE_URL: 'xAI API base URL; default https://api.x.ai.',
  INSTAGRAM_API_KEY: 'Secret: RapidAPI key of the photo-sharing data vendor (Instagram Looter).',
  INSTAGRAM_API_HOST: 'RapidAPI host of the photo-sharing data vendor (instagram-looter2.p.rapidapi.com).',
  INSTAGRAM_BASE_URL: 'Base URL of that vendor; default https://<INSTAGRAM_API_HOST>.',
  FACEBOOK_API_KEY: 'Secret: RapidAPI key of the social-network data vendor (Facebook Scraper3).',
  FACEBOOK_API_HOST: 'RapidAPI host of the social-network data vendor (facebook-scraper3.p.rapidapi.com).',
  FACEBOOK_BASE_URL: 'Base URL of that vendor; default https://<FACEBOOK_API_HOST>.',
  HUNTER_API_KEY: 'Secret: Hunter API key (lead emails: find, verify, enrich, by domain, discovery, technologies).',
  HUNTER_BASE_URL: 'Hunter base URL; default https://api.hunter.io.',
  PEOPLEDATALABS_API_KEY: 'Secret: People Data Labs API key (profiles, mobile numbers, people and company search, firmographics, funding).',
  PEOPLEDATALABS_BASE_URL: 'People Data Labs base URL; default https://api.peopledatalabs.com.',
  THECOMPANIESAPI_API_KEY: 'Secret: The Companies API key (competitors: look-alike companies of a domain).',
  THECOMPANIESAPI_BASE_URL: 'The Companies API base URL; default https://api.thecompaniesapi.com.',
  MCP_ALLOWED_ORIGINS: 'Comma-separated browser origins allowed to call the MCP endpoint besides its own and the dashboard\'s.',
  DATAFORSEO_LOGIN: 'DataForSEO API login (SEO rows, serp, ai-visibility, model answers).',
  DATAFORSEO_PASSWORD: 'Secret: DataForSEO API password.',
  DATAFORSEO_BASE_URL: 'DataForSEO base URL; default https://api.dataforseo.com.',
  FIRECRAWL_API_KEY: 'Secret: Firecrawl API key (search; scrape and map when set).',
  FIRECRAWL_BASE_URL: 'Firecrawl base URL, cloud or self-hosted; default https://api.firecrawl.dev.',
  WEB_PROVIDER: 'Provider of /scrape and /map: firecrawl or builtin; default firecrawl when FIRECRAWL_API_KEY is set, else builtin.',
  SCRAPE_DNS_URL: 'DNS-over-HTTPS JSON resolver the built-in web provider checks every host name with before fetching; default https://cloudflare-dns.com/dns-query. When it cannot answer, nothing is fetched.',
  SCRAPE_ALLOW_PRIVATE_HOSTS: 'Comma-separated host:port pairs the built-in web provider may fetch although they are private (an intranet, a local test site); exact matches only; empty by default.',
  WEBHOOK_ALLOW_PRIVATE_HOSTS: 'Comma-separated host:port pairs webhook events may be delivered to although they are private (a receiver on the same network); exact matches only; empty by default. Separate from SCRAPE_ALLOW_PRIVATE_HOSTS, so a scrape allowance never widens where events may go.',
  OAUTH_CLIENT_ALLOW_PRIVATE_HOSTS: 'Comma-separated host:port pairs the MCP worker may read OAuth client ID metadata documents from although they are private (a client being developed on the same network); exact matches only; empty by default. Separate from SCRAPE_ALLOW_PRIVATE_HOSTS, so a scrape allowance never widens what the authorization server fetches.',
  STRIPE_SECRET_KEY: 'Secret: Stripe secret key; with STRIPE_WEBHOOK_SECRET it turns on paying for plans and top-ups in the dashboard.',
  STRIPE_WEBHOOK_SECRET: 'Secret: signing secret (whsec_...) of the Stripe webhook endpoint <APP_URL>/api/billing/stripe-webhook.',
  STRIPE_BASE_URL: 'Stripe API base URL; default https://api.stripe.com.',
  RESEND_API_KEY: 'Secret: Resend API key; when set, the dashboard sends its emails (invitations, the email confirmation the free trial waits for) through Resend.',
  RESEND_BASE_URL: 'Resend API base URL; default https://api.resend.com.',
  EMAIL_FROM: 'Sender of the dashboard\'s emails, e.g. "Sluice <no-reply@example.com>".',
  DEV_OUTBOX: 'Set to 1 to keep the emails the dashboard would send in D1 and show them at <APP_URL>/dev/outbox (npm start sets it; never on a public deployment).',
  SCRAPE_CRAWLER_INFO_URL: 'Page about the crawler, named in its User-Agent (SluiceBot/1.0); default <BASE_URL>/docs.',
  SCRAPE_AI_MODEL: 'Workers AI model of the built-in web provider\'s summary and json formats (with the AI binding); default @cf/meta/llama-3.3-70b-instruct-fp8-fast.',
} as const;

export type SettingName = keyof typeof SETTINGS;

/** Bindings and settings of the api worker. */
export type Env = Partial<Record<SettingName, string>> &
  ObjectBindings & {
    WORKSPACE_GATE: DurableObjectNamespace<WorkspaceGateProtocol>;
    ORG_WALLET: DurableObjectNamespace<OrgWalletProtocol>;
    IDEMPOTENCY_STORE: DurableObjectNamespace<IdempotencyStoreProtocol>;
    WEBHOOK_SENDER: DurableObjectNamespace<WebhookSenderProtocol>;
    WORKSPACE_DATABASE: DurableObjectNamespace<WorkspaceDatabaseProtocol>;
    /** The Workflow that runs data jobs (the `agnt` source), one instance per job, its id the job's. */
    DATA_JOBS: Workflow<DataJobParams>;
    /** Large answers D1 only indexes: data jobs' item answers over INLINE_DATA_BYTES, change-tracking snapshots. */
    RESULTS: R2Bucket;
    /** The nightly work the cron starts and its messages carry on: usage.daily's pages and reports, prunes (src/api/nightly.ts). */
    NIGHTLY: Queue<NightlyMessage>;
    BASE_URL: string;
    TOOLS_BASE_URL: string;
    MCP_URL: string;
    APP_URL: string;
    KEY_ENCRYPTION_KEY: string;
    /** The api worker's static assets (wrangler.toml [assets]): the reference UI /docs serves. */
    ASSETS: Fetcher;
  };

export interface PublicUrls {
  base: string;
  tools: string;
  mcp: string;
  app: string;
  docs: string;
  openapi: string;
  signup: string;
  agentSetup: string;
}

export function publicUrls(env: Env): PublicUrls {
  const base = trimSlash(env.BASE_URL);
  const app = trimSlash(env.APP_URL);
  return {
    base,
    tools: trimSlash(env.TOOLS_BASE_URL),
    mcp: trimSlash(env.MCP_URL),
    app,
    docs: `${base}/docs`,
    openapi: `${base}/openapi.json`,
    signup: `${app}/signup`,
    agentSetup: `${base}/agent-setup/prompt.md`,
  };
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}
