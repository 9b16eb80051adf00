import type { PageLocation } from './inputs';
import type { BuiltinWebSettings } from './settings';

/** What every request for a page says about who asks and in which languages. */
export function pageRequestHeaders(settings: BuiltinWebSettings, options: { mobile?: boolean; location?: PageLocation }): Record<string, string> {
  return {
    'user-agent': options.mobile ? settings.mobileUserAgent : settings.userAgent,
    accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,application/pdf;q=0.8,*/*;q=0.5',
    'accept-language': acceptLanguage(options.location),
  };
}

/** `de-CH, de;q=0.9, en;q=0.8` from the languages in order of preference; American English by default. */
export function acceptLanguage(location: PageLocation | undefined): string {
  const languages = location?.languages?.filter((language) => /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/.test(language)) ?? [];
  if (languages.length === 0) return 'en-US,en;q=0.9';
  return languages
    .slice(0, 9)
    .map((language, index) => (index === 0 ? language : `${language};q=${(1 - index / 10).toFixed(1)}`))
    .join(', ');
}
