import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Files whose tests are generated from the registry: a few lines on disk and minutes of calls (a row of
 * tests for every operation). Vitest orders files it has no timings for (a fresh clone) by size, largest
 * first, which put these last: the run ended with one of them on a core and the other core idle.
 */
const GENERATED_FROM_THE_REGISTRY = ['test/properties/', 'test/catalog/vendor-operations.test.ts'];

const generated = (spec: TestSpecification) => GENERATED_FROM_THE_REGISTRY.some((path) => spec.moduleId.includes(`/${path}`));

/** Vitest's own order (timings when it has them, else size), with the registry's generated files first. */
export default class RegistryFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    return [...sorted.filter(generated), ...sorted.filter((spec) => !generated(spec))];
  }
}
