/**
 * The built-in web provider: /scrape and /map served from the worker itself, with no vendor account.
 * Safety (public targets only) lives in safe-fetch.ts; every outbound request goes through it.
 */
export { scrapeWithBuiltin } from './scrape';
export { selectorProblems } from './page';
export { actionProblems } from './render-policy';
export { mapWithBuiltin } from './map';
export { auditWithBuiltin } from './onpage-audit';
export { measureMedia, mediaFetcher, type MeasuredMedia } from './media-size';
export { videoFrameWithBuiltin } from './video-frame';
export type { BuiltinWebContext, MapInput as BuiltinMapInput, ScrapeInput as BuiltinScrapeInput } from './inputs';
