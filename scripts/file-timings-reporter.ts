/**
 * A vitest reporter that ends the run with each test file's duration, longest first, so CI shows where
 * the suite's minutes go. `npm test` runs it after the default reporter (scripts/test.mjs), which still
 * shows every failure. A file's time is from its environment's setup to its last hook; files run side by
 * side (one per core), so the times add up to more than the run's.
 */
import type { Reporter, TestModule, Vitest } from 'vitest/node';

export default class FileTimingsReporter implements Reporter {
  private log: (line: string) => void = console.log;

  onInit(vitest: Vitest): void {
    this.log = (line) => vitest.logger.log(line);
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const files = testModules.map((module) => {
      const diagnostic = module.diagnostic();
      const imports = diagnostic.environmentSetupDuration + diagnostic.prepareDuration + diagnostic.collectDuration + diagnostic.setupDuration;
      return { file: module.relativeModuleId, project: module.project.name, state: module.state(), imports, total: imports + diagnostic.duration };
    });
    if (files.length === 0) return;
    files.sort((a, b) => b.total - a.total);
    const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`.padStart(8);
    const projectWidth = Math.max(...files.map((file) => file.project.length));
    this.log('\nPer-file durations, longest first (total, of which setup and import):');
    for (const file of files) {
      const state = file.state === 'passed' ? '' : `  (${file.state})`;
      this.log(`${seconds(file.total)} ${seconds(file.imports)}  ${file.project.padEnd(projectWidth)}  ${file.file}${state}`);
    }
    this.log(`${seconds(files.reduce((sum, file) => sum + file.total, 0))}           all ${files.length} files, one after another`);
  }
}
