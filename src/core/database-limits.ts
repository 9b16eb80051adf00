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
  /**
   * Milliseconds one request's statements may run. Checked between rows and after the last; inside a
   * statement the platform stops it: Cloudflare's CPU limit (`[limits] cpu_ms` of wrangler.toml, the
   * same 5 s) resets the object, and locally the database process is restarted (scripts/stack.ts).
   */
  statementMs: 5_000,
  /** Rows a recursive common table expression may produce: its LIMIT, which it must state, may not say more. */
  recursiveRows: 1_000_000,
};

/** Names: letters, digits, dot, dash and underscore, starting with a letter or digit. */
export const DATABASE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Why the SQL was refused before it ran: a shape that never ends, or a way to read the object's internals. */
export type ScreenRefusal = { kind: 'refused'; message: string } | { kind: 'limit'; limit: 'recursiveRows'; message: string };

interface Token {
  /** `name` is a bare word or a quoted identifier, its quotes removed; `string` a '...' literal. */
  kind: 'name' | 'quoted' | 'string' | 'number' | 'param' | 'punct';
  text: string;
}

/**
 * A token SQLite may take for a name: a word, a quoted identifier, or a '...' literal, which SQLite reads as a
 * name where only a name fits (`WITH 'c'(x) AS ...`, `FROM 'sqlite_stat1'`): a screen that skipped those let both
 * through.
 */
const mayName = (token: Token | undefined) => token !== undefined && (token.kind === 'name' || token.kind === 'quoted' || token.kind === 'string');

/**
 * Refuses, before anything runs, what the bounds checked while a statement runs cannot stop in time or
 * what would tell a user about the object's own storage:
 * - a recursive common table expression without `LIMIT <n>` (n at most `recursiveRows`): without one it
 *   may never end, and a statement that yields no row until the end is stopped only by the platform;
 * - `ANALYZE`, `PRAGMA optimize` (which runs it) and any mention of the `sqlite_stat*` tables, where
 *   ANALYZE writes the row count of every table, the object's own `_cf_KV` included.
 * Other long statements (a cross join of large tables) pass this screen: they are bounded while they run.
 */
export function screenStatement(sql: string): ScreenRefusal | null {
  const tokens = tokenize(sql);
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index]!;
    // A literal only when it is the whole name, so a value that merely mentions the table ('ANALYZE sqlite_stat1') is kept.
    if ((token.kind === 'string' ? /^sqlite_stat\w*$/i : /^sqlite_stat/i).test(token.text) && mayName(token)) {
      return { kind: 'refused', message: `${token.text} is internal to the database and cannot be read or written.` };
    }
    if (token.kind !== 'name') continue;
    const word = token.text.toUpperCase();
    const startsStatement = index === 0 || tokens[index - 1]!.text === ';';
    if (startsStatement && word === 'ANALYZE') return { kind: 'refused', message: 'ANALYZE is not available: the query planner needs no statistics here.' };
    if (startsStatement && word === 'PRAGMA' && pragmaName(tokens, index + 1)?.toLowerCase() === 'optimize') {
      return { kind: 'refused', message: 'PRAGMA optimize is not available: it runs ANALYZE.' };
    }
    if (word === 'WITH') {
      const refused = screenCommonTableExpressions(tokens, index + 1);
      if (refused) return refused;
    }
  }
  return null;
}

function pragmaName(tokens: Token[], at: number): string | undefined {
  return tokens[at + 1]?.text === '.' ? tokens[at + 2]?.text : tokens[at]?.text;
}

/** `[RECURSIVE] name [(columns)] AS [NOT] [MATERIALIZED] (body) [, ...]`, from just after WITH. */
function screenCommonTableExpressions(tokens: Token[], at: number): ScreenRefusal | null {
  let index = tokens[at]?.kind === 'name' && tokens[at]!.text.toUpperCase() === 'RECURSIVE' ? at + 1 : at;
  for (;;) {
    const name = tokens[index];
    if (!name || !mayName(name)) return null;
    index++;
    if (tokens[index]?.text === '(') index = closingParen(tokens, index) + 1;
    if (tokens[index]?.text.toUpperCase() !== 'AS') return null;
    index++;
    while (tokens[index]?.kind === 'name' && /^(NOT|MATERIALIZED)$/i.test(tokens[index]!.text)) index++;
    if (tokens[index]?.text !== '(') return null;
    const end = closingParen(tokens, index);
    const body = tokens.slice(index + 1, end);
    const recursive = recursiveBody(body, name.text);
    if (recursive && !limitedBody(body)) {
      return {
        kind: 'limit',
        limit: 'recursiveRows',
        message: `The recursive common table expression ${name.text} needs a LIMIT of at most ${DATABASE_LIMITS.recursiveRows.toLocaleString('en-US')} rows, written as a number at the end of its definition (for example ... FROM ${name.text} LIMIT 1000), so that it ends.`,
      };
    }
    index = end + 1;
    if (tokens[index]?.text !== ',') return null;
    index++;
  }
}

/** SQLite's shape of a recursive definition: a compound select whose part after the first UNION names the table itself (not as an alias). */
function recursiveBody(body: Token[], name: string): boolean {
  let depth = 0;
  let union = -1;
  for (let index = 0; index < body.length && union < 0; index++) {
    const text = body[index]!.text;
    if (text === '(') depth++;
    else if (text === ')') depth--;
    else if (depth === 0 && body[index]!.kind === 'name' && text.toUpperCase() === 'UNION') union = index;
  }
  if (union < 0) return false;
  return body.some(
    (token, index) =>
      index > union && mayName(token) && token.text.toLowerCase() === name.toLowerCase() && !/^(AS|\.)$/i.test(body[index - 1]!.text),
  );
}

/** Whether the body ends, at its own depth, with `LIMIT n`, `LIMIT n OFFSET m` or `LIMIT m, n`, n a number within the bound. */
function limitedBody(body: Token[]): boolean {
  let depth = 0;
  for (let index = 0; index < body.length; index++) {
    const text = body[index]!.text;
    if (text === '(') depth++;
    else if (text === ')') depth--;
    else if (depth === 0 && body[index]!.kind === 'name' && text.toUpperCase() === 'LIMIT') {
      const rest = body.slice(index + 1);
      const count = rest[1]?.text === ',' ? rest[2] : rest[0];
      const shape = rest[1]?.text === ',' ? 3 : rest[1]?.text.toUpperCase() === 'OFFSET' ? 3 : 1;
      if (rest.length !== shape || rest.some((token, position) => position % 2 === 0 && token.kind !== 'number')) return false;
      return count !== undefined && Number(count.text) <= DATABASE_LIMITS.recursiveRows;
    }
  }
  return false;
}

function closingParen(tokens: Token[], open: number): number {
  let depth = 0;
  for (let index = open; index < tokens.length; index++) {
    if (tokens[index]!.text === '(') depth++;
    else if (tokens[index]!.text === ')' && --depth === 0) return index;
  }
  return tokens.length;
}

/** SQLite's lexical rules, as far as the screen needs them: comments dropped, literals and quoted names kept whole. */
function tokenize(sql: string): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  const quoted = (close: string, kind: Token['kind']) => {
    let text = '';
    let index = at + 1;
    for (; index < sql.length; index++) {
      if (sql[index] === close) {
        if (close !== ']' && sql[index + 1] === close) {
          text += close;
          index++;
          continue;
        }
        break;
      }
      text += sql[index];
    }
    tokens.push({ kind, text });
    at = index + 1;
  };
  while (at < sql.length) {
    const char = sql[at]!;
    if (/\s/.test(char)) at++;
    else if (sql.startsWith('--', at)) at = sql.includes('\n', at) ? sql.indexOf('\n', at) + 1 : sql.length;
    else if (sql.startsWith('/*', at)) at = sql.includes('*/', at + 2) ? sql.indexOf('*/', at + 2) + 2 : sql.length;
    else if (char === "'") quoted("'", 'string');
    else if (char === '"') quoted('"', 'quoted');
    else if (char === '`') quoted('`', 'quoted');
    else if (char === '[') quoted(']', 'quoted');
    else {
      const word = /^(?:0[xX][0-9a-fA-F]+|[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)|^[?:@$][A-Za-z0-9_]*|^[A-Za-z_\u0080-\uffff][A-Za-z0-9_$\u0080-\uffff]*/.exec(sql.slice(at, at + 256));
      if (word) {
        const text = word[0];
        const kind = /^[0-9.]/.test(text) ? 'number' : /^[?:@$]/.test(text) ? 'param' : 'name';
        tokens.push({ kind, text });
        at += text.length;
      } else {
        tokens.push({ kind: 'punct', text: char });
        at++;
      }
    }
  }
  return tokens;
}
