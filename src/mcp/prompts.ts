import { ErrorCode, type GetPromptResult, type Prompt } from '@modelcontextprotocol/sdk/types.js';
import { protocolError } from './protocol-error';
import { type CatalogTool, DATA_TOOLS } from '../operations/tools';

/**
 * Prompts: short message templates for the jobs Sluice is bought for, naming the real tools. A prompt is
 * listed only where its tools are served, and a choice (an argument with a fixed set of values, which
 * completion/complete offers) only where the tools it needs are.
 */
interface PromptDefinition {
  name: string;
  title: string;
  description: string;
  /** Free-text arguments. */
  text: { name: string; description: string; required?: boolean }[];
  /** One optional argument with fixed values, each naming the data tools it uses; the first served is the default. */
  choice: { name: string; description: string; values: Record<string, string[]> };
  message(args: Record<string, string>, tools: (name: string) => CatalogTool): string;
}

const priced = (tool: CatalogTool) => `${tool.name} (${tool.price})`;

const SEO_STEPS: Record<string, (tools: (name: string) => CatalogTool) => string> = {
  'on-page': (tools) =>
    `Scrape the page with ${priced(tools('data_web_scrape'))} and check its title, meta description, headings (one h1), canonical link, indexability, word count, image alt texts and internal links.`,
  keywords: (tools) =>
    `Find the keywords its domain ranks for with ${priced(tools('data_seo_ranked_keywords'))}, and the domains competing for them with ${priced(tools('data_seo_competitors'))}.`,
  backlinks: (tools) =>
    `Read the backlink profile with ${priced(tools('data_seo_backlinks_summary'))} and the strongest linking domains with ${priced(tools('data_seo_referring_domains'))}.`,
};

const PROMPTS: PromptDefinition[] = [
  {
    name: 'enrich_companies',
    title: 'Enrich a list of companies',
    description: 'Looks up each company of a list by its domain, keeps the results in a workspace database and answers one table.',
    text: [
      { name: 'companies', description: 'The companies\' domains, one per line or separated by commas, e.g. "stripe.com, adyen.com".', required: true },
      { name: 'database', description: 'Name of the workspace database to keep the results in (default: companies).' },
    ],
    choice: {
      name: 'source',
      description: 'Where the company data comes from: leads (firmographics: industry, size, location, founded) or linkedin (the company page).',
      values: { leads: ['data_leads_company_enrich'], linkedin: ['data_linkedin_get_company_by_domain'] },
    },
    message: (args, tools) => {
      const tool = tools(args.source === 'linkedin' ? 'data_linkedin_get_company_by_domain' : 'data_leads_company_enrich');
      const domains = args.companies!.split(/[\s,;]+/).filter(Boolean);
      const database = args.database || 'companies';
      return [
        `Enrich these ${domains.length} companies: ${domains.join(', ')}.`,
        `1. For each domain, call ${priced(tool)} with that domain, one call per company. Only successful calls are charged; note the domains it does not find instead of guessing.`,
        `2. Keep what you found: find a database named "${database}" with sluice_db_list or create it with sluice_db_create, create a table for the companies if it has none, and insert one row per company with sluice_db_query (parameterized).`,
        '3. Answer one table: domain, name, industry, size, location, and a short note per company; then the total cost from the meta.costCents of the calls.',
      ].join('\n');
    },
  },
  {
    name: 'audit_page_seo',
    title: "Audit a page's SEO",
    description: "Audits one page's SEO from its content, its domain's rankings and its backlinks, and answers fixes in order of impact.",
    text: [{ name: 'url', description: 'The page to audit, e.g. https://example.com/pricing.', required: true }],
    choice: {
      name: 'focus',
      description: 'What to look at: all (default), on-page (the page itself), keywords (rankings and competitors) or backlinks.',
      values: {
        all: ['data_web_scrape', 'data_seo_ranked_keywords', 'data_seo_competitors', 'data_seo_backlinks_summary', 'data_seo_referring_domains'],
        'on-page': ['data_web_scrape'],
        keywords: ['data_seo_ranked_keywords', 'data_seo_competitors'],
        backlinks: ['data_seo_backlinks_summary', 'data_seo_referring_domains'],
      },
    },
    message: (args, tools) => {
      const steps = args.focus === 'all' ? Object.values(SEO_STEPS) : [SEO_STEPS[args.focus!]!];
      return [
        `Audit the SEO of ${args.url}.`,
        ...steps.map((step, index) => `${index + 1}. ${step(tools)}`),
        `${steps.length + 1}. Answer the fixes in order of impact, each with the evidence from the tool answers (figures, not impressions), and the total cost from the meta.costCents of the calls.`,
      ].join('\n');
    },
  },
];

const TOOLS_BY_NAME = new Map(DATA_TOOLS.map((tool) => [tool.name, tool]));
for (const prompt of PROMPTS)
  for (const name of Object.values(prompt.choice.values).flat()) if (!TOOLS_BY_NAME.has(name)) throw new Error(`Prompt ${prompt.name} names ${name}, which is no tool.`);

/** The prompts one server offers, given the data tools it serves. */
export function promptsOf(served: Set<string>) {
  const servedValues = (prompt: PromptDefinition) => Object.keys(prompt.choice.values).filter((value) => prompt.choice.values[value]!.every((name) => served.has(name)));

  const offered = PROMPTS.filter((prompt) => servedValues(prompt).length > 0);
  const find = (name: string) => {
    const prompt = offered.find((candidate) => candidate.name === name);
    if (!prompt) throw protocolError(ErrorCode.InvalidParams, `Unknown prompt: ${name}. Prompts here: ${offered.map((candidate) => candidate.name).join(', ') || 'none'}.`);
    return prompt;
  };

  return {
    list(): Prompt[] {
      return offered.map((prompt) => ({
        name: prompt.name,
        title: prompt.title,
        description: prompt.description,
        arguments: [
          ...prompt.text,
          { name: prompt.choice.name, description: `${prompt.choice.description} Served here: ${servedValues(prompt).join(', ')}.`, required: false },
        ],
      }));
    },

    get(name: string, args: Record<string, string> = {}): GetPromptResult {
      const prompt = find(name);
      const missing = prompt.text.filter((argument) => argument.required && !args[argument.name]?.trim()).map((argument) => argument.name);
      if (missing.length > 0) throw protocolError(ErrorCode.InvalidParams, `Prompt ${name} needs ${missing.join(' and ')}.`);
      const values = servedValues(prompt);
      const chosen = args[prompt.choice.name] || values[0]!;
      if (!values.includes(chosen)) throw protocolError(ErrorCode.InvalidParams, `${prompt.choice.name} of ${name} is one of ${values.join(', ')} here, not '${chosen}'.`);
      const text = prompt.message({ ...args, [prompt.choice.name]: chosen }, (tool) => TOOLS_BY_NAME.get(tool)!);
      return { description: prompt.description, messages: [{ role: 'user', content: { type: 'text', text } }] };
    },

    /** The served values of a choice argument starting with what was typed; a free-text argument has none. */
    complete(name: string, argument: string, typed: string): string[] {
      const prompt = find(name);
      return argument === prompt.choice.name ? servedValues(prompt).filter((value) => value.startsWith(typed)) : [];
    },
  };
}
