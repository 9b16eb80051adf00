/**
 * `npm run deploy:check`: the production check (scripts/deploy/check.ts) on the configs as `npm run deploy`
 * renders them (an example workers.dev subdomain stands in for the account's), before the bundles are built.
 * No account is needed; exit 1 lists every problem.
 */
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { PROJECT_ROOT } from './lib/home';
import { productionProblems } from './deploy/check';
import { readWorkerConfigs } from './deploy/configs';
import { deployBase, renderConfigs, resolveUrls } from './deploy/render';
import { checkInputs, formatProblems } from './deploy';

export async function productionCheck(root = PROJECT_ROOT) {
  const { SETTINGS } = (await import(pathToFileURL(`${root}/src/core/config.ts`).href)) as { SETTINGS: Record<string, string> };
  const configs = await readWorkerConfigs(root);
  const names = { api: String(configs[0]!.raw.name), mcp: String(configs[1]!.raw.name), app: String(configs[2]!.raw.name) };
  const urls = resolveUrls({}, names, 'example').urls!;
  const base = deployBase(process.env, root);
  const rendered = renderConfigs(configs, { environment: 'production', urls, buildId: 'check', vars: {}, d1Ids: {} }, base);
  const { sources, history } = await checkInputs(root, configs, base);
  return productionProblems({ configs: rendered, sources, settings: SETTINGS, history });
}

if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  const problems = await productionCheck();
  if (problems.length) {
    process.stderr.write(`The production check failed:\n${formatProblems(problems)}\n`);
    process.exitCode = 1;
  } else process.stdout.write('Production check passed: the three configs agree and nothing local ships.\n');
}
