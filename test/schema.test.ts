import { env } from 'cloudflare:workers';
import { expect, it } from 'vitest';
import schema from '../schema.sql?raw';

/** The tables and indexes of a database, as SQLite records them. */
async function shape(db: D1Database, exclude: string[]) {
  const { results } = await db
    .prepare("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' ORDER BY name")
    .all<{ type: string; name: string; sql: string }>();
  return results.filter((row) => !exclude.includes(row.name)).map((row) => ({ ...row, sql: row.sql.replace(/\s+/g, ' ') }));
}

/** schema.sql is written by `npm run -s schema:generate` from the migrations; after a new migration, run it again. */
it('schema.sql describes exactly what the migrations build', async () => {
  const scratch = env.SCRATCH_DB;
  // Statements end at `;`, except a trigger's, whose body holds statements of its own: it ends at `END;`.
  const statements = (schema.replace(/--.*$/gm, '').match(/\s*(?:CREATE\s+TRIGGER[\s\S]*?\bEND\s*;|[^;]+;)/gi) ?? []).map((part) => part.trim());
  for (const statement of statements) {
    await scratch.prepare(statement).run();
  }
  expect(await shape(scratch, [])).toEqual(await shape(env.DB, ['d1_migrations']));
});
