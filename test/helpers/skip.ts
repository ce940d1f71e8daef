/**
 * `run` (a uvu test or suite), or its `skip` when a tool it needs is missing, with the
 * reason printed: uvu then counts the test as skipped, never as passed, and `.ci/run`,
 * which installs every such tool, fails on any skip.
 */
export function requiring<T extends { skip: unknown }>(run: T, missing: string | undefined, where: string): T {
  if (missing === undefined) return run;
  console.log(`${where}: skipped: ${missing}`);
  return run.skip as T;
}
