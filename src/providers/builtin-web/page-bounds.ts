import { Parser } from 'htmlparser2';
import { normalizeUpstream } from '../normalize';

/**
 * How much work one page may cost the built-in provider. Parsing, Readability and the Markdown conversion
 * are synchronous: while they run, nothing else in the isolate does (other customers' calls, /health). So
 * the page is measured while it streams, before any DOM exists, and one past a bound is refused.
 */
export const PAGE_BOUNDS = {
  /**
   * Elements left after what is never content is stripped. A long article has one or two thousand; parsing,
   * choosing the content and converting cost about linear time in elements, each stage in one synchronous
   * block (at this bound, a few hundred ms each on one core), so this bound is what limits how long one
   * page can hold the isolate.
   */
  maxElements: 20_000,
  /**
   * Nesting depth, as the DOM parser will build it. Lighthouse flags pages deeper than 32; Blink flattens
   * its tree at 512. Readability's work grows with depth times elements, turndown recurses per level.
   */
  maxDepth: 128,
  /**
   * Attributes of one element. Real pages stay under a few dozen (a framework's data-* attributes, ARIA);
   * the DOM, Readability and the Markdown conversion each walk every attribute, so one element carrying
   * hundreds of thousands of them costs seconds no element count reveals.
   */
  maxAttributesPerElement: 256,
  /** Attributes of the whole page after stripping: the element bound times a generous average of five. */
  maxAttributes: 100_000,
  /**
   * Bytes of one tag, `<` to `>`. The streaming rewriter hands on a start tag only once it has read all of
   * it, so an element of a million attributes would be read whole before any bound above could count
   * them; this one is counted on the bytes as they arrive. Real tags are a few hundred bytes; an inline
   * data: URL of an image is the largest honest one.
   */
  maxTagBytes: 256 * 1024,
  /** Readability's own element limit (maxElemsToParse); a bigger page's main content is chosen without it. */
  readabilityMaxElements: 8_000,
  /**
   * Readability's work grows with elements times depth (about 7 µs per unit on one core for nested divs,
   * which make it retry; a 124-deep page of one line took 100 ms): past this product (2,000 elements 20
   * deep) a page's main content is chosen without it.
   */
  readabilityMaxWork: 40_000,
  /** Time spent on one page's stages, checked between them (a stage itself cannot be interrupted). */
  budgetMs: 1_500,
} as const;

/** Never content in any format but rawHtml, stripped while the page streams. */
const NEVER_CONTENT = 'script, style, template, iframe, object, embed, canvas, svg';

/**
 * Bytes handed to the rewriter (and so to the measuring parser) per turn; between turns other requests of
 * the isolate run. Each turn is one synchronous block, whose length this sets (16 KB of nested elements
 * cost the rewriter about 2 ms on the shared 2-core test machine; see docs/decisions.md). The first slices
 * are smaller and double up to it: a page past a bound within its first kilobyte costs 2 KB of work.
 */
const SLICE_BYTES = { first: 2 * 1024, most: 16 * 1024 } as const;

export interface MeasuredHtml {
  /** The page without what is never content (scripts, styles, embedded objects, vector art) or comments. */
  html: string;
  elements: number;
  depth: number;
  /** The page as it was sent, decoded (rawHtml), when asked for. */
  source?: string;
}

export interface HtmlPage {
  url: string;
  /** The page's bytes as they arrive; cancelled here as soon as a bound is passed. */
  body: ReadableStream<Uint8Array>;
  /** The encoding the page is in, as TextDecoder names it. */
  charset: string;
}

/**
 * Reads the page while it streams: the runtime's streaming HTMLRewriter strips what is never content, then
 * the same parser the DOM is built by (htmlparser2, under linkedom) counts elements and nesting, slice by
 * slice, each slice's time charged to the page's budget. At the first bound passed the page is cancelled,
 * so the rest of it is never read (a hostile page costs its first kilobytes, not its megabytes), and the
 * answer is a 422 naming the bound, before any DOM work.
 */
export async function measureHtml(page: HtmlPage, budget: PageBudget, options: { keepSource?: boolean } = {}): Promise<MeasuredHtml> {
  const source = page.body.getReader();
  const input = new PageSlices(source, page.charset, options.keepSource ?? false, page.url);
  const stripped = new HTMLRewriter()
    .on(NEVER_CONTENT, { element: (element) => void element.remove() })
    .onDocument({ comments: (comment) => void comment.remove() })
    .transform(new Response(input.stream, { headers: { 'content-type': 'text/html; charset=utf-8' } }));

  let elements = 0;
  let attributes = 0;
  let attributesHere = 0;
  let depth = 0;
  let deepest = 0;
  /** The bound passed, if one was: the parser is paused there, not thrown out of (about 70 µs dearer per page). */
  let passed: string | undefined;
  const measuring = new Parser({
    onopentagname: () => {
      elements++;
      attributesHere = 0;
      depth++;
      if (depth > deepest) deepest = depth;
      if (elements > PAGE_BOUNDS.maxElements) passed = `it has more than ${PAGE_BOUNDS.maxElements.toLocaleString('en-US')} elements`;
      else if (depth > PAGE_BOUNDS.maxDepth) passed = `it nests elements more than ${PAGE_BOUNDS.maxDepth} deep`;
      if (passed) measuring.pause();
    },
    onattribute: () => {
      attributes++;
      attributesHere++;
      if (attributesHere > PAGE_BOUNDS.maxAttributesPerElement) passed = `an element carries more than ${PAGE_BOUNDS.maxAttributesPerElement} attributes`;
      else if (attributes > PAGE_BOUNDS.maxAttributes) passed = `it has more than ${PAGE_BOUNDS.maxAttributes.toLocaleString('en-US')} attributes`;
      if (passed) measuring.pause();
    },
    onclosetag: () => {
      depth--;
    },
  });
  const measure = (text: string) => {
    budget.run(() => measuring.write(text));
    if (passed) throw pastBound(page.url, passed);
  };

  const parts: string[] = [];
  const decoder = new TextDecoder();
  const reader = stripped.body!.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      const text = done ? decoder.decode() : decoder.decode(value, { stream: true });
      if (text) {
        parts.push(text);
        measure(text);
        await budget.checkpoint('reading');
      }
      if (done) break;
    }
    if (input.failure !== undefined) throw input.failure;
    budget.run(() => measuring.end());
  } catch (error) {
    // Whatever stopped the reading, the rest of the page is not wanted: the upstream connection is closed.
    // (The page, not the rewriter's output: cancelling that leaves an unhandled rejection inside the runtime;
    // with its input ended the rewriter stops by itself.)
    await source.cancel().catch(() => {});
    // The page's own failure (past the byte cap, a broken connection, the time limit) is answered as itself.
    if (input.failure !== undefined) throw input.failure;
    // The rewriter keeps its own stack of open elements and gives up past its memory limit; that is a bound too.
    if (error instanceof TypeError && /memory limit/i.test(error.message)) throw pastBound(page.url, 'its structure is past the streaming parser\'s memory limit');
    throw error;
  }
  return { html: parts.join(''), elements, depth: deepest, ...(options.keepSource ? { source: input.keptText() } : {}) };
}

/**
 * The page as UTF-8 (what the rewriter is given) in slices of SLICE_BYTES, each read from the source only
 * when the rewriter asks for it. A page in another charset is decoded and encoded again; the source text is
 * kept when asked for.
 */
class PageSlices {
  readonly stream: ReadableStream<Uint8Array>;
  /** What the source failed with, if it did. */
  failure: unknown;
  private readonly transcoding: boolean;
  private readonly decoder: TextDecoder | undefined;
  private readonly kept: string[] = [];
  private rest: Uint8Array = new Uint8Array(0);
  private sliceBytes: number = SLICE_BYTES.first;
  /** Bytes read since a `<` that no `>` has followed yet: the length of the tag being read. */
  private openTagBytes = 0;

  constructor(
    private readonly reader: ReadableStreamDefaultReader<Uint8Array>,
    charset: string,
    private readonly keep: boolean,
    private readonly url: string,
  ) {
    this.transcoding = charset !== 'utf-8';
    this.decoder = this.transcoding || keep ? new TextDecoder(charset) : undefined;
    this.stream = new ReadableStream<Uint8Array>(
      {
        pull: (controller) => this.pull(controller),
        cancel: (reason) => reader.cancel(reason),
      },
      { highWaterMark: 0 },
    );
  }

  keptText(): string {
    return this.kept.join('');
  }

  private async pull(controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    while (this.rest.byteLength === 0) {
      const next = await this.read();
      if (next === undefined) return controller.close();
      this.rest = next;
    }
    const size = this.sliceBytes;
    this.sliceBytes = Math.min(2 * size, SLICE_BYTES.most);
    // A copy, not a view: the runtime may take over the buffer of what it is handed.
    const slice = this.rest.byteLength > size ? this.rest.slice(0, size) : this.rest;
    this.rest = this.rest.byteLength > size ? this.rest.subarray(size) : new Uint8Array(0);
    controller.enqueue(slice);
  }

  /**
   * Whether this chunk leaves a tag open past the bound. Counted on the raw bytes with the runtime's own
   * search (`<` and `>` are the same byte in every charset a page may declare here), whatever the quotes:
   * a `>` inside an attribute value only ends the count early.
   */
  private tagTooLong(chunk: Uint8Array): boolean {
    const opened = chunk.lastIndexOf(LESS_THAN);
    const closed = chunk.lastIndexOf(GREATER_THAN);
    if (opened > closed) this.openTagBytes = chunk.byteLength - opened;
    else if (closed >= 0) this.openTagBytes = 0;
    else if (this.openTagBytes > 0) this.openTagBytes += chunk.byteLength;
    return this.openTagBytes > PAGE_BOUNDS.maxTagBytes;
  }

  /** The next chunk as UTF-8; undefined at the end. */
  private async read(): Promise<Uint8Array | undefined> {
    let next: ReadableStreamReadResult<Uint8Array>;
    try {
      next = await this.reader.read();
    } catch (error) {
      // Ended, not errored: an error passed into the rewriter surfaces as an unhandled rejection inside the
      // runtime. The reader of the rewriter's output answers the failure once the rest has drained.
      this.failure = error;
      next = { done: true, value: undefined };
    }
    if (!next.done && this.tagTooLong(next.value)) {
      this.failure = pastBound(this.url, `a tag is longer than ${PAGE_BOUNDS.maxTagBytes / 1024} KB`);
      await this.reader.cancel().catch(() => {});
      next = { done: true, value: undefined };
    }
    if (next.done) {
      const tail = this.decoder?.decode() ?? '';
      if (this.keep) this.kept.push(tail);
      return this.transcoding && tail ? utf8.encode(tail) : undefined;
    }
    if (!this.decoder) return next.value;
    const text = this.decoder.decode(next.value, { stream: true });
    if (this.keep) this.kept.push(text);
    return this.transcoding ? utf8.encode(text) : next.value;
  }
}

const utf8 = new TextEncoder();
const LESS_THAN = 0x3c;
const GREATER_THAN = 0x3e;

/**
 * The time one page's synchronous work may take. Each piece of work is timed on its own (not the waits
 * between, where other requests of the isolate run: a busy isolate must not make a page look costly), and
 * at each checkpoint the isolate gets a turn, then the call's time limit and the budget are checked.
 * (On Cloudflare the clock only moves at I/O, so there the bounds above are what hold; the budget is the
 * backstop where the clock runs, as in workerd locally.)
 */
export class PageBudget {
  private spentMs = 0;

  constructor(
    private readonly url: string,
    private readonly signal: AbortSignal,
    private readonly budgetMs: number = PAGE_BOUNDS.budgetMs,
  ) {}

  /** Runs synchronous work, counting its time against the budget. */
  run<T>(work: () => T): T {
    const started = performance.now();
    try {
      return work();
    } finally {
      this.spentMs += performance.now() - started;
    }
  }

  /** A turn of the event loop for other requests, then the time limit and the budget are checked. */
  async checkpoint(after: string): Promise<void> {
    await yieldToOthers();
    if (this.signal.aborted) throw normalizeUpstream.failed(`Scraping ${this.url}`, 'timed out');
    if (this.spentMs > this.budgetMs) {
      throw pastBound(this.url, `processing it took more than the ${this.budgetMs.toLocaleString('en-US')} ms budget (stopped after ${after})`);
    }
  }

  /** One synchronous stage, then a checkpoint. */
  async stage<T>(name: string, work: () => T): Promise<T> {
    const result = this.run(work);
    await this.checkpoint(name);
    return result;
  }
}

function pastBound(url: string, reason: string) {
  return normalizeUpstream.rejected('The built-in web provider', `${url} is past what it reads: ${reason}. This call was not charged.`);
}

/** A turn of the event loop (a timer, so a real one: a resolved promise would not let other requests in). */
function yieldToOthers(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
