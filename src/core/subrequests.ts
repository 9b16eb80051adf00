/**
 * Subrequests, as Cloudflare counts them: every fetch (each redirect hop is one) and every call to D1, R2, KV,
 * the Cache API, a Durable Object or another binding. A Worker request may make as many as its `[limits]
 * subrequests`; a Workflow instance as many over all its steps (core/protocols/job.ts).
 */

/**
 * The most subrequests one call of an operation makes through its provider: every fetch of the built-in web
 * provider (each page, redirect hop, robots.txt, sitemap, media file and DNS-over-HTTPS lookup), and every look
 * for a free browser or for one of the organization's render slots. A /map of a site on one host takes up to
 * about 350 (its 100 pages and 50 sitemaps with a redirect each, a few robots.txt files and lookups); one whose
 * pages are spread over many subdomains costs about 4 a page of a new host (its name's two lookups and its
 * robots.txt besides the page), so it may stop short of its 100 pages, having listed every link it read
 * (a link to a host is listed without that host's robots.txt, map.ts). Past it nothing more goes out: a map
 * answers what it found with a warning, a rendered page's further requests are refused, a wait ends.
 */
export const CALL_SUBREQUESTS = 500;

/**
 * The most subrequests one call makes besides its provider's budget, as a data job's item: the pipeline's own
 * (the idempotency claim, a late takeover's charge read and completion: 3; the gate's meter: 1; the response
 * cache's lookup and store: 2; the job-hour admission: 1; the settle, asked again through a new stub, and the
 * charge read: 4; the balance: 1; the answer kept or the claim given back with its charge read: 2; a refusal's
 * row: 1; a connection's failure written: 1), the provider's fixed calls (a vendor's one fetch and up to 20
 * redirects the platform follows: 21, more than change tracking's 4 and the model's 2 and a render slot's
 * release together), and the item's own writes in its slice (its answer in R2, its row into the job's table: 3).
 * 40 counted, 50 kept.
 */
export const CALL_OVERHEAD_SUBREQUESTS = 50;

/**
 * The most of CALL_SUBREQUESTS a call's waits take (its looks for a free browser, about 2 every 250 ms, and its
 * asks for one of the organization's render slots, 1 every 500 ms): a wait of a minute would otherwise spend
 * some 480, and the page it waited for render with its requests refused. A budget of another limit keeps the
 * same share.
 */
export const WAITING_SUBREQUESTS = 150;

/**
 * What one call may still make through its provider: taken before each subrequest goes out, so the call never
 * makes more than its limit, whatever the site does.
 */
export class SubrequestBudget {
  private used = 0;
  private refused = false;
  private waits: SubrequestBudget | undefined;

  /** `within`: a budget this one is a share of, which whatever this one takes is taken from too. */
  constructor(
    readonly limit = CALL_SUBREQUESTS,
    private readonly within?: SubrequestBudget,
  ) {}

  /** Takes `count` for subrequests about to go out; false, with nothing taken, when fewer are left. */
  take(count = 1): boolean {
    if (this.used + count > this.limit || (this.within && !this.within.take(count))) {
      this.refused = true;
      return false;
    }
    this.used += count;
    return true;
  }

  /** The share of this budget the call's waits take from (WAITING_SUBREQUESTS of CALL_SUBREQUESTS): the rest is kept for the page. */
  get waiting(): SubrequestBudget {
    this.waits ??= new SubrequestBudget(Math.floor((this.limit * WAITING_SUBREQUESTS) / CALL_SUBREQUESTS), this);
    return this.waits;
  }

  /** Why a wait that took from `waiting` had to end, for its error: the call's budget, or the waits' share of it. */
  get waitEnded(): string {
    return this.ranOut
      ? `the call has made the ${this.limit} requests one call may make`
      : `its waits have made the ${this.waiting.limit} of its ${this.limit} requests a call may spend waiting, the rest being kept for the page`;
  }

  /** Subrequests taken so far. */
  get spent(): number {
    return this.used;
  }

  /** Whether a subrequest was refused for want of budget: the call stopped short of what it would have done. */
  get ranOut(): boolean {
    return this.refused;
  }
}
