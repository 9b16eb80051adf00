import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Files that run far longer than their size says. Vitest orders files it has no timings for (a fresh clone)
 * by size, largest first, which put the registry's generated files (a few lines on disk, a row of tests for
 * every operation) last: the run ended with one of them on a core and the others idle. The data jobs' file
 * runs a 1,000-item job (minutes of one workerd beside the others).
 */
const LONGER_THAN_THEIR_SIZE = ['test/jobs/jobs.test.ts', 'test/catalog/vendor-operations.test.ts', 'test/properties/'];

const longer = (spec: TestSpecification) => LONGER_THAN_THEIR_SIZE.some((path) => spec.moduleId.includes(`/${path}`));

/** Vitest's own order (timings when it has them, else size), with the files that run longer than their size first. */
export default class LongFilesFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    return [...sorted.filter(longer), ...sorted.filter((spec) => !longer(spec))];
  }
}
