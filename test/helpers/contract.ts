import { suite, type Test } from 'uvu';

// The harness every store contract shares (undici's cacheStoreTests(Store) pattern):
// a suite per backend, `reset` before each case, and every store a case opened closed after it.

export interface ContractBackend<S> {
  open(): Promise<S>;
  reset(): Promise<void>;
  before?(): Promise<void>;
  after?(): Promise<void>;
}

export function contractSuite<S extends { close(): Promise<void> }>(name: string, backend: ContractBackend<S>) {
  const test: Test = suite(name);
  const opened: S[] = [];
  /** Remembers a store so it is closed after the case. */
  const track = (store: S) => {
    opened.push(store);
    return store;
  };
  if (backend.before) test.before(backend.before);
  test.before.each(backend.reset);
  test.after.each(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
  });
  if (backend.after) test.after(backend.after);
  return { test, track, open: async () => track(await backend.open()) };
}
