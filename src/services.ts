import type { Logger } from 'pino';
import type { OpenExports } from './admission/open-exports.ts';
import type { Admission } from './admission/queue.ts';
import type { ResponseCache } from './cache/store.ts';
import type { Clock } from './clock.ts';
import type { Database } from './duckdb/database.ts';
import type { InviteStore } from './invites/store.ts';
import type { KeyStore } from './keys/store.ts';
import type { HeavyBudget } from './limits/budget.ts';
import type { Limiter } from './limits/limiter.ts';
import type { Metrics } from './metrics.ts';
import type { ReleaseEvents } from './notify/release-event.ts';
import type { AggregateResult } from './query/aggregate.ts';
import type { CursorCodec } from './query/cursor.ts';
import type { HistoryTable } from './query/history.ts';
import type { KeptResults } from './query/kept-results.ts';
import type { RevisionDiff } from './query/revisions.ts';
import type { CalendarSettings } from './releases/release-calendar.ts';
import type { Releases } from './releases/releases.ts';
import type { UsageLog } from './usage/usage-log.ts';
import type { Webhooks } from './webhooks/manage.ts';

/** The limiters requests are counted against (docs/api.md "Rate limits"). */
export interface Limits {
  /** Per API key: RATE_LIMIT_PER_MINUTE and RATE_LIMIT_PER_DAY. */
  readonly requests: Limiter;
  /** Per client address: missing or invalid keys (BAD_KEY_LIMIT_PER_MINUTE). */
  readonly badKeys: Limiter;
  /** Per API key: bulk exports a UTC day (EXPORT_LIMIT_PER_DAY), besides the request limits. */
  readonly exports: Limiter;
  /** Per client address: unknown invite tokens on the claim page (CLAIM_GUARD_PER_MINUTE). */
  readonly claims: Limiter;
  /** Per API key: seconds of heavy work a minute (KEY_HEAVY_SECONDS_PER_MINUTE). */
  readonly heavy: HeavyBudget;
}

/** Each key's usage (GET /v1/usage, /v1/usage/daily, `npm run admin -- usage`). */
export interface UsageService {
  /** Counts each answered request, and reads a key's days from the store with what is not written yet. */
  readonly log: UsageLog;
  /** Per API key: calls to the usage endpoints (USAGE_LIMIT_PER_MINUTE), which no other limit counts. */
  readonly guard: Limiter;
  /** Where the limiters count: Redis shared by the replicas, this process's memory, or nowhere (BENCH_DISABLE_LIMITS). */
  readonly backend: 'redis' | 'memory' | 'disabled';
  /** False with BENCH_DISABLE_USAGE: no answer is counted (the bench times what counting costs). */
  readonly counting: boolean;
}

/** What request handlers depend on, built once at start and passed down. */
export interface Services {
  readonly db: Database;
  /** Every release: the current one, the published ones a request may name, loading and pinning them. */
  readonly releases: Releases;
  /** What subscribers are told of each line of the publication log, its counts computed once (webhooks, feeds). */
  readonly releaseEvents: ReleaseEvents;
  /** The feeds of the publication log and the release calendar (docs/api.md "Notifications"). */
  readonly notifications: {
    /** FEED_PUBLIC: the feeds need no key. */
    readonly feedsPublic: boolean;
    /** PUBLIC_URL: the base of the feeds' links; the request's own origin when unset. */
    readonly publicUrl?: string;
    /** RELEASE_DAY and RELEASE_TOLERANCE_DAYS; none when RELEASE_DAY is unset. */
    readonly calendar?: CalendarSettings;
  };
  /** Longest a request waits for a release it names to load (RELEASE_LOAD_WAIT_MS). */
  readonly releaseLoadWaitMs: number;
  /** Longest heavy work runs from its turn to its answer's first byte (QUERY_TIMEOUT_MS). */
  readonly queryTimeoutMs: number;
  readonly cursors: CursorCodec;
  /** Aggregate results kept whole for paging. */
  readonly aggregates: KeptResults<AggregateResult>;
  /** Most groups one aggregate may produce (AGGREGATE_MAX_GROUPS). */
  readonly aggregateMaxGroups: number;
  /** FACET_VALUES: the most values /v1/facets lists per dimension. */
  readonly facetValues: number;
  /** Revisions diffs kept whole for paging. */
  readonly revisions: KeptResults<RevisionDiff>;
  /** Histories kept whole for paging. */
  readonly history: KeptResults<HistoryTable>;
  /** HISTORY_MAX_RELEASES: the most releases one /v1/history request spans. */
  readonly historyMaxReleases: number;
  /** Finished bodies of successful responses, emptied when the releases change. */
  readonly cache: ResponseCache;
  readonly keys: KeyStore;
  readonly limits: Limits;
  readonly usage: UsageService;
  readonly invites: InviteStore;
  /** Turns for heavy work: aggregates computed, revisions diffs, histories, filtered exports, release loads. */
  readonly admission: Admission;
  /** Exports streaming now, per key, and how long one may go unread (EXPORT_IDLE_SECONDS). */
  readonly exports: { readonly open: OpenExports; readonly idleMs: number };
  /** Where requests write files they remove when they end (a filtered Parquet export): STATE_DIR/scratch, emptied at start. */
  readonly scratchDir: string;
  /** The built client packages, one folder per language (CLIENTS_DIR), served at /clients/<language>/. */
  readonly clientsDir: string;
  /** Each API key's webhook endpoints and their delivery (docs/api.md "Webhooks"). */
  readonly webhooks: Webhooks;
  readonly clock: Clock;
  readonly log: Logger;
  readonly metrics: Metrics;
}
