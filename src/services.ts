import type { Logger } from 'pino';
import type { ResponseCache } from './cache/store.ts';
import type { CurrentRelease } from './store/current-release.ts';
import type { Database } from './duckdb/database.ts';
import type { InviteStore } from './invites/store.ts';
import type { KeyStore } from './keys/store.ts';
import type { Clock, Limiter } from './limits/limiter.ts';
import type { Metrics } from './metrics.ts';
import type { AggregateResults } from './query/aggregate-results.ts';
import type { CursorCodec } from './query/cursor.ts';

/** What request handlers depend on, built once at start and passed down. */
export interface Services {
  readonly db: Database;
  readonly release: CurrentRelease;
  readonly cursors: CursorCodec;
  /** Aggregate results kept whole for paging, and the bound on their groups. */
  readonly aggregates: AggregateResults;
  /** Finished bodies of successful responses, emptied when the release changes. */
  readonly cache: ResponseCache;
  /** Cache-Control of successful responses: `private, max-age=<CACHE_MAX_AGE_SECONDS>`. */
  readonly cacheControl: string;
  readonly keys: KeyStore;
  /** Per API key: RATE_LIMIT_PER_MINUTE and RATE_LIMIT_PER_DAY. */
  readonly limits: Limiter;
  /** Per client address: missing or invalid keys (BAD_KEY_LIMIT_PER_MINUTE). */
  readonly badKeys: Limiter;
  readonly invites: InviteStore;
  /** Per client address: unknown invite tokens on the claim page (CLAIM_GUARD_PER_MINUTE). */
  readonly claimGuard: Limiter;
  readonly clock: Clock;
  readonly log: Logger;
  readonly metrics: Metrics;
}
