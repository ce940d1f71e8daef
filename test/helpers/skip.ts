import { suite } from 'uvu';

// The one way a test that needs an absent tool is skipped: uvu counts it as skipped,
// never as passed, and `<where>: skipped: <reason>` is printed. `.ci/run`, which
// installs every such tool, fails on any skip.

/** `run` (a uvu test or suite), or its skip when `missing` says what it needs and lacks. */
export function requiring<T extends { skip: unknown }>(run: T, missing: string | undefined, where: string): T {
  if (missing === undefined) return run;
  console.log(`${where}: skipped: ${missing}`);
  return run.skip as T;
}

/** A suite whose setup needs what is missing: run as one skipped case. */
export function skippedSuite(name: string, missing: string): void {
  const skipped = suite(name);
  requiring(skipped, missing, name)(`needs what is missing: ${missing}`, () => {});
  skipped.run();
}
