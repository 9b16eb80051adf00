/**
 * The bar every OpenAPI document Sluice publishes is held to: `redocly lint --extends recommended-strict`
 * (@redocly/cli, a devDependency), run as a developer would run it (its own binary, without npx's launcher).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, runCommand } from './processes';

/** Every problem the strict rules find in `document` (its text as served), one line each: rule, pointer, message. */
export async function strictLintProblems(document: string, dir: string, name = 'openapi.json'): Promise<string[]> {
  const file = join(dir, name);
  writeFileSync(file, document);
  const ran = await runCommand(join(ROOT, 'node_modules', '.bin', 'redocly'), ['lint', file, '--extends', 'recommended-strict', '--format=json'], {
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  });
  const start = ran.stdout.indexOf('{');
  if (start < 0) return [`redocly exited ${ran.code} with no report: ${ran.stderr.trim()}`];
  const report = JSON.parse(ran.stdout.slice(start)) as { problems: { ruleId: string; message: string; location: { pointer: string }[] }[] };
  const problems = report.problems.map((problem) => `${problem.ruleId} ${problem.location[0]?.pointer}: ${problem.message}`);
  return problems.length === 0 && ran.code !== 0 ? [`redocly exited ${ran.code}: ${ran.stderr.trim()}`] : problems;
}
