import type { ResponseCache } from './store.ts';

/** Caching off (`CACHE_MAX_BYTES=0`): every request renders its body. */
export class NoopResponseCache implements ResponseCache {
  readonly bytes = 0;

  get(): Buffer | undefined {
    return undefined;
  }

  set(): void {}

  keeps(): boolean {
    return false;
  }

  clear(): void {}
}
