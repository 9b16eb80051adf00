/**
 * `npm run -s schema:generate`: applies migrations/ to an empty D1 database (in workerd, as wrangler and
 * the tests apply them) and writes what they built to schema.sql, the whole schema in one file for a
 * reader. The migrations are the source; schema.sql is never edited by hand, and test/schema.test.ts
 * fails when it no longer describes what the migrations build.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Log, LogLevel, Miniflare } from 'miniflare';

const root = resolve(import.meta.dirname, '..');

const HEADER = `-- The D1 schema, in full, as the migrations in migrations/ build it. Written by
-- \`npm run -s schema:generate\`: do not edit; add a migration and run it again (test/schema.test.ts checks).
`;

/**
 * The statements of a migration, each with the comments inside it: SQLite keeps a table's text from
 * `CREATE` on, so the comments on its columns reach schema.sql (wrangler's reader would drop them).
 */
function statementsOf(sql: string): string[] {
  const statements: string[] = [];
  let start = 0;
  for (let at = 0; at < sql.length; at++) {
    const char = sql[at]!;
    if (char === '-' && sql[at + 1] === '-') at = sql.indexOf('\n', at) === -1 ? sql.length : sql.indexOf('\n', at);
    else if (char === '/' && sql[at + 1] === '*') at = sql.indexOf('*/', at + 2) + 1;
    else if (char === "'" || char === '"') at = sql.indexOf(char, at + 1);
    else if (char === ';') {
      // A trigger's body holds statements of its own: the trigger ends at its `END;`.
      if (/\bCREATE\s+TRIGGER\b/i.test(sql.slice(start, at)) && !/\bEND\s*$/i.test(sql.slice(start, at))) continue;
      statements.push(sql.slice(start, at));
      start = at + 1;
    }
  }
  statements.push(sql.slice(start));
  // A piece that is only comments and spaces is no statement.
  return statements.filter((statement) => statement.replace(/--.*$/gm, '').replace(/\/\*[\s\S]*?\*\//g, '').trim() !== '');
}

const miniflare = new Miniflare({
  log: new Log(LogLevel.WARN),
  cf: false,
  modules: true,
  script: 'export default { fetch() { return new Response(null, { status: 404 }); } };',
  d1Databases: ['DB'],
});
try {
  const db = await miniflare.getD1Database('DB');
  // In the order wrangler applies them: by file name.
  for (const file of readdirSync(join(root, 'migrations')).filter((name) => name.endsWith('.sql')).sort()) {
    for (const statement of statementsOf(readFileSync(join(root, 'migrations', file), 'utf8'))) await db.prepare(statement).run();
  }
  // In the order they were made, so every index follows its table.
  const { results } = await db
    .prepare("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' ORDER BY rowid")
    .all<{ sql: string }>();
  writeFileSync(join(root, 'schema.sql'), `${HEADER}\n${results.map((row) => `${row.sql};\n`).join('\n')}`);
  console.log(`Wrote schema.sql: ${results.length} tables and indexes.`);
} finally {
  await miniflare.dispose();
}
