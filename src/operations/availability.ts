import type { SettingName } from '../core/config';
import type { Operation } from '../core/operation';

type Settings = Partial<Record<SettingName, string>>;

/**
 * The settings an operation's provider still lacks on this installation: what `sluice_tools_list_enabled`
 * reports, so an agent does not try a tool that would answer 503 PROVIDER_UNAVAILABLE. Vendor rows name
 * their settings; the web and SEO providers' needs are mirrored here (each provider still refuses by
 * itself when called).
 */
export function missingSettings(operation: Pick<Operation, 'platform' | 'name' | 'upstream'>, env: Settings): SettingName[] {
  const missing = (...names: (SettingName | undefined)[]) => names.filter((name): name is SettingName => name !== undefined && !env[name]);
  if (operation.upstream) return missing(operation.upstream.vendor.keySetting, operation.upstream.vendor.hostSetting);
  switch (operation.platform) {
    case 'web':
      // Scrape and map fall back to the built-in provider unless Firecrawl is asked for by name.
      if (operation.name === 'search' || env.WEB_PROVIDER === 'firecrawl') return missing('FIRECRAWL_API_KEY');
      return [];
    case 'seo':
      // The on-page audit falls back to the built-in one without DataForSEO.
      if (operation.name === 'onpage-audit') return [];
      return missing('DATAFORSEO_LOGIN', 'DATAFORSEO_PASSWORD');
    default:
      return [];
  }
}
