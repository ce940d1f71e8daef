import type { Logger } from 'pino';
import type { ResponseCache } from './cache/store.ts';
import type { PublishedReleases } from './releases/published.ts';
import type { ResidentReleases } from './store/resident-releases.ts';
import type { Vintages } from './store/vintages.ts';
import type { Database } from './duckdb/database.ts';
import type { InviteStore } from './invites/store.ts';
import type { KeyStore } from './keys/store.ts';
import type { Clock, Limiter } from './limits/limiter.ts';
import type { Metrics } from './metrics.ts';
import type { AggregateResult } from './query/aggregate.ts';
import type { KeptResults } from './query/kept-results.ts';
import type { RevisionResult } from './query/revisions.ts';
import type { CursorCodec } from './query/cursor.ts';

/** What request handlers depend on, built once at start and passed down. */
export interface Services {
  readonly db: Database;
  /** The loaded releases: the current one, and others kept for cursors and `release=`. */
  readonly release: ResidentReleases;
  /** The releases `release=` may name, and their manifests. */
  readonly published: PublishedReleases;
  /** Loads a published release on demand. */
  readonly vintages: Vintages;
  /** Longest a request waits for a release to load (RELEASE_LOAD_WAIT_MS). */
  readonly releaseWaitMs: number;
  readonly cursors: CursorCodec;
  /** Aggregate results kept whole for paging. */
  readonly aggregates: KeptResults<AggregateResult>;
  /** Most groups one aggregate may produce (AGGREGATE_MAX_GROUPS). */
  readonly aggregateMaxGroups: number;
  /** Revisions diffs kept whole for paging. */
  readonly revisions: KeptResults<RevisionResult>;
  /** Finished bodies of successful responses, emptied when the release changes. */
  readonly cache: ResponseCache;
  /** Cache-Control of successful responses: `private, max-age=<CACHE_MAX_AGE_SECONDS>`. */
  readonly cacheControl: string;
  readonly keys: KeyStore;
  /** Per API key: RATE_LIMIT_PER_MINUTE and RATE_LIMIT_PER_DAY. */
  readonly limits: Limiter;
  /** Per client address: missing or invalid keys (BAD_KEY_LIMIT_PER_MINUTE). */
  readonly badKeys: Limiter;
  /** Per API key: bulk exports a UTC day (EXPORT_LIMIT_PER_DAY), besides the request limits. */
  readonly exportBudget: Limiter;
  readonly invites: InviteStore;
  /** Per client address: unknown invite tokens on the claim page (CLAIM_GUARD_PER_MINUTE). */
  readonly claimGuard: Limiter;
  readonly clock: Clock;
  readonly log: Logger;
  readonly metrics: Metrics;
}
