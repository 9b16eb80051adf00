/** Rows one statement deletes at most, so a daily run never holds D1 in one long write. */
export const DELETE_CHUNK = 5_000;
/** Statements one pruning run sends at most; what is left, a message of the nightly queue runs again (src/api/nightly.ts). */
export const STATEMENTS_PER_RUN = 2_000;

/**
 * The statements one daily pruning run may still send (usage rows, job items, scrape snapshots each have a
 * run of their own; an R2 listing with its delete counts as one). `drain` repeats a deleting statement, given
 * the chunk to bind as its LIMIT, until a run of it deletes less than a chunk (`done`) or the budget is spent.
 */
export class PruningBudget {
  #left = STATEMENTS_PER_RUN;

  async drain(statement: (limit: number) => D1PreparedStatement): Promise<{ deleted: number; done: boolean }> {
    let deleted = 0;
    while (this.#left > 0) {
      this.#left -= 1;
      const changes = (await statement(DELETE_CHUNK).run()).meta.changes;
      deleted += changes;
      if (changes < DELETE_CHUNK) return { deleted, done: true };
    }
    return { deleted, done: false };
  }

  /**
   * Deletes every R2 object under `prefix`, a listing (up to 1,000 keys) and its one delete at a time, the two
   * counted as one statement. Answers whether the prefix is empty, or false when the budget ran out first.
   */
  async drainBucket(bucket: R2Bucket, prefix: string): Promise<boolean> {
    while (this.take()) {
      const listed = await bucket.list({ prefix });
      if (listed.objects.length > 0) await bucket.delete(listed.objects.map((object) => object.key));
      if (!listed.truncated) return true;
    }
    return false;
  }

  /** Takes one statement from the budget: false, and nothing taken, when it is spent. */
  take(): boolean {
    if (this.#left <= 0) return false;
    this.#left -= 1;
    return true;
  }

  /** Counts a statement sent outside `drain` (one that follows a drained table: hourly totals, a job's mark). */
  count(): void {
    this.#left -= 1;
  }

  /** Whether the run used all its statements: what it pruned may not be all there was, and another run carries on. */
  get spent(): boolean {
    return this.#left <= 0;
  }
}
