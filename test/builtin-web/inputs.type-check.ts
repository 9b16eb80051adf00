/**
 * Checked by the typecheck (`tsc -p .`, part of `npm test`), never run: the registry's parsed inputs and the
 * pipeline's context fit what the built-in web provider reads, so a schema change the provider cannot take
 * fails the build.
 */
import type { ProviderContext } from '../../src/core/operation';
import type { MapInput as RegistryMapInput, ScrapeInput as RegistryScrapeInput } from '../../src/core/web-inputs';
import type { BuiltinWebContext, MapInput, ScrapeInput } from '../../src/providers/builtin-web/inputs';

/** Compiles only when `Given` can be handed where `Taken` is read. */
type Fits<Given extends Taken, Taken> = [Given, Taken];

export type BuiltinWebTakesWhatTheRegistryParses = [
  Fits<RegistryScrapeInput, ScrapeInput>,
  Fits<RegistryMapInput, MapInput>,
  Fits<ProviderContext, BuiltinWebContext>,
];

// The check can fail: an input without its url does not fit (were ScrapeInput to accept anything, this
// directive would be unused, itself an error).
// @ts-expect-error url is required by what the provider reads.
export type WithoutUrl = Fits<Omit<RegistryScrapeInput, 'url'>, ScrapeInput>;
