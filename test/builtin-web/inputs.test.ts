import { describe, expectTypeOf, it } from 'vitest';
import type { MapInput as RegistryMapInput, ScrapeInput as RegistryScrapeInput } from '../../src/core/web-inputs';
import type { ProviderContext } from '../../src/core/operation';
import type { BuiltinWebContext, MapInput, ScrapeInput } from '../../src/providers/builtin-web/inputs';

// Checked by `tsc -p .`: the registry's parsed inputs and the pipeline's context fit what the provider reads.
describe('the built-in provider takes what the registry parses', () => {
  it('scrape and map inputs, and the pipeline context', () => {
    expectTypeOf<RegistryScrapeInput>().toExtend<ScrapeInput>();
    expectTypeOf<RegistryMapInput>().toExtend<MapInput>();
    expectTypeOf<ProviderContext>().toExtend<BuiltinWebContext>();
  });
});
