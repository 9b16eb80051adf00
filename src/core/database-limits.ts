/**
 * The bounds of workspace databases, as data: what a request may send, what a statement may answer, how
 * big a database may grow and how long a statement may run. Requests past them are refused with 400
 * VALIDATION_ERROR naming the bound; a statement past them is rolled back. (Tests lower a bound to
 * observe it without filling hundreds of megabytes.)
 */
export const DATABASE_LIMITS = {
  /** Characters of SQL in one request. */
  sqlCharacters: 100_000,
  /** Bound parameters of one request (the platform's own limit per statement). */
  params: 100,
  /** Rows one statement may answer; add a LIMIT and page with OFFSET or a key past that. */
  resultRows: 10_000,
  /** Bytes of the rows one statement may answer, as JSON. */
  resultBytes: 4 * 1024 * 1024,
  /** Size of one database's SQLite file. */
  databaseBytes: 512 * 1024 * 1024,
  /** Milliseconds one request's statements may run, checked between rows and after the last. */
  statementMs: 5_000,
};

/** Names: letters, digits, dot, dash and underscore, starting with a letter or digit. */
export const DATABASE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
