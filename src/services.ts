import type { Logger } from 'pino';
import type { ResponseCache } from './cache/store.ts';
import type { CurrentRelease } from './data/current-release.ts';
import type { Database } from './data/duckdb.ts';
import type { KeyStore } from './keys/store.ts';
import type { CursorCodec } from './query/cursor.ts';

/** What request handlers depend on, built once at start and passed down. */
export interface Services {
  readonly db: Database;
  readonly release: CurrentRelease;
  readonly cursors: CursorCodec;
  /** Finished bodies of successful responses, emptied when the release changes. */
  readonly cache: ResponseCache;
  /** Cache-Control of successful responses: `private, max-age=<CACHE_MAX_AGE_SECONDS>`. */
  readonly cacheControl: string;
  readonly keys: KeyStore;
  readonly log: Logger;
}
