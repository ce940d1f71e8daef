import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { ResponseCache } from './cache/store.ts';
import type { Clock } from './clock.ts';

// Everything /metrics exposes (docs/deploy.md "Metrics"). One registry per running
// service, not prom-client's global one, so two services in one process (tests)
// never share or clash over counters.

const SECONDS_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export class Metrics {
  readonly registry = new Registry();

  /** Label `code` is the error catalog's machine code, empty for a success. */
  readonly requests = new Counter({
    name: 'dqs_http_requests_total',
    help: 'Requests answered, by listener, route, status and error code',
    labelNames: ['listener', 'route', 'status', 'code'] as const,
    registers: [this.registry],
  });

  readonly requestSeconds = new Histogram({
    name: 'dqs_http_request_duration_seconds',
    help: 'Time from a request reaching the app to its response being produced, by listener and route',
    labelNames: ['listener', 'route'] as const,
    buckets: SECONDS_BUCKETS,
    registers: [this.registry],
  });

  readonly cacheLookups = new Counter({
    name: 'dqs_response_cache_lookups_total',
    help: 'Response cache lookups, by result (hit or miss)',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  readonly aggregateComputations = new Counter({
    name: 'dqs_aggregate_computations_total',
    help: 'Aggregates grouped from the rows or a rollup; every page of one aggregate is sliced from one computation, and identical requests at once share it',
    registers: [this.registry],
  });

  readonly revisionComputations = new Counter({
    name: 'dqs_revision_computations_total',
    help: 'Revisions diffs computed by DuckDB (a FULL JOIN of two releases); every page of one walk is sliced from one computation',
    registers: [this.registry],
  });

  readonly historyComputations = new Counter({
    name: 'dqs_history_computations_total',
    help: 'Histories computed by DuckDB (window functions over every published release); every page of one walk is sliced from one computation',
    registers: [this.registry],
  });

  /** Label `outcome`: what followed one attempt of a release event (docs/deploy.md "Metrics"). */
  readonly webhookAttempts = new Counter({
    name: 'dqs_webhook_attempts_total',
    help: 'Attempts to deliver a release event to a webhook, by what followed: delivered (2xx), retry (a later attempt is due), given_up (the last attempt failed), gone (410: the webhook is disabled)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly webhookDeliverySeconds = new Histogram({
    name: 'dqs_webhook_delivery_seconds',
    help: 'Time from a release event being queued for a webhook to the attempt its URL answered 2xx, the wait for every replica and retries included',
    buckets: [0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 7200, 43200, 86400],
    registers: [this.registry],
  });

  readonly webhooksDisabled = new Counter({
    name: 'dqs_webhooks_disabled_total',
    help: 'Webhooks the service disabled, by reason: gone (a 410), failing (two messages in a row failed every attempt)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly limiterRefusals = new Counter({
    name: 'dqs_limiter_refusals_total',
    help: 'Requests refused with 429, by limiter (key: per API key; bad_key: per address for missing or invalid keys; usage: per API key, calls to /v1/usage)',
    labelNames: ['limiter'] as const,
    registers: [this.registry],
  });

  readonly replayed = new Counter({
    name: 'dqs_replayed_answers_total',
    help: 'Repeated keyed requests answered from the record of their first answer without running their handler, by status (200 or 304)',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });

  readonly releaseSwitchFailures = new Counter({
    name: 'dqs_release_switch_failures_total',
    help: 'Distinct failures to serve what DATA_DIR/CURRENT names (an unreadable pointer, a missing folder, a bad manifest, a file that fails its checks); a failure repeated by later polls counts once',
    registers: [this.registry],
  });

  readonly releaseLoadSeconds = new Histogram({
    name: 'dqs_release_load_seconds',
    help: 'Time to load a release asked for by release= or a cursor that was not loaded (checksums, tables, self-check)',
    buckets: [0.5, 1, 2, 5, 10, 20, 40, 80],
    registers: [this.registry],
  });

  readonly releaseLoadStoppedSeconds = new Histogram({
    name: 'dqs_release_load_stopped_seconds',
    help: 'Time from the start of a release load asked for by release= or a cursor to its stop, once no request waited for it any longer (their deadlines passed, their clients gone)',
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10],
    registers: [this.registry],
  });

  readonly redisErrors = new Counter({
    name: 'dqs_redis_errors_total',
    help: 'Redis connection errors and failed limiter commands (requests admitted uncounted)',
    registers: [this.registry],
  });

  readonly redisDataLost = new Counter({
    name: 'dqs_redis_data_lost_total',
    help: 'Times this replica found Redis had lost its data (its generation marker gone or changed) and wrote its copy back, by store (keys, invites)',
    labelNames: ['store'] as const,
    registers: [this.registry],
  });

  readonly poolWaitSeconds = new Histogram({
    name: 'dqs_duckdb_pool_wait_seconds',
    help: 'Time a query waited for a free DuckDB connection',
    buckets: SECONDS_BUCKETS,
    registers: [this.registry],
  });

  readonly querySeconds = new Histogram({
    name: 'dqs_duckdb_query_seconds',
    help: 'Time a DuckDB connection was held by one unit of work',
    buckets: SECONDS_BUCKETS,
    registers: [this.registry],
  });

  readonly admissionWaitSeconds = new Histogram({
    name: 'dqs_admission_wait_seconds',
    help: 'Time a heavy job (aggregate, revisions, history, export, release_load) waited for its turn before it ran',
    labelNames: ['kind'] as const,
    buckets: [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly heavyRefusals = new Counter({
    name: 'dqs_heavy_refusals_total',
    help: 'Heavy requests refused, by reason: busy (waited past ADMISSION_WAIT_MS, or DuckDB out of memory), too_many_groups (refused before grouping), exports_open (EXPORTS_OPEN_PER_KEY), export_idle (an export ended after EXPORT_IDLE_SECONDS unread)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly heavyCancellations = new Counter({
    name: 'dqs_heavy_cancellations_total',
    help: 'Heavy work stopped before its answer, by kind and reason: deadline (QUERY_TIMEOUT_MS or Prefer: wait passed), client_gone (the client closed the connection)',
    labelNames: ['kind', 'reason'] as const,
    registers: [this.registry],
  });

  readonly heavySeconds = new Counter({
    name: 'dqs_heavy_seconds_total',
    help: "Seconds of heavy work charged to keys' budgets (KEY_HEAVY_SECONDS_PER_MINUTE), by kind: from each job's turn to its end or cancellation",
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  /** Children bound once for what every cached hit counts: a labelled call looks its child up each time. */
  readonly cacheHits = this.cacheLookups.labels('hit');
  readonly cacheMisses = this.cacheLookups.labels('miss');
  readonly replayed200 = this.replayed.labels('200');
  readonly replayed304 = this.replayed.labels('304');

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'dqs_' });
  }

  /** Gauges read at scrape time from what the service holds. */
  observe(sources: {
    cache: ResponseCache;
    releases: {
      readonly loadedCount: number;
      current(): { readonly id: string } | undefined;
      memory(): ReadonlyArray<{ release: string; parts: Readonly<Record<string, number>> }>;
    };
    /** DuckDB's own accounting of its memory, by tag (its duckdb_memory() table). */
    duckdbMemory: () => Promise<ReadonlyArray<{ tag: string; bytes: number }>>;
    admission: { readonly queued: number; readonly active: number };
    clock: Clock;
  }): void {
    new Gauge({
      name: 'dqs_admission_jobs',
      help: 'Heavy jobs by state: waiting for a turn, or running',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        this.set({ state: 'waiting' }, sources.admission.queued);
        this.set({ state: 'running' }, sources.admission.active);
      },
    });
    new Gauge({
      name: 'dqs_release_memory_bytes',
      help: 'Bytes each loaded release holds in memory, by part: columns (the column store), rollups (pre-aggregated tables), renderers (pre-encoded row fragments)',
      labelNames: ['release', 'part'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const { release, parts } of sources.releases.memory())
          for (const [part, bytes] of Object.entries(parts)) this.set({ release, part }, bytes);
      },
    });
    new Gauge({
      name: 'dqs_duckdb_memory_bytes',
      help: "Memory DuckDB's buffer manager accounts for, by tag (its duckdb_memory() table: tables, hash tables, sorts…)",
      labelNames: ['tag'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const { tag, bytes } of await sources.duckdbMemory()) if (bytes > 0) this.set({ tag }, bytes);
      },
    });
    new Gauge({
      name: 'dqs_response_cache_bytes',
      help: 'Bytes held by the response cache (bodies and keys)',
      registers: [this.registry],
      collect() {
        this.set(sources.cache.bytes);
      },
    });
    new Gauge({
      name: 'dqs_release_info',
      help: 'The release being served (label `release`); absent while the first one loads',
      labelNames: ['release'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        const id = sources.releases.current()?.id;
        if (id) this.set({ release: id }, 1);
      },
    });
    new Gauge({
      name: 'dqs_releases_loaded',
      help: 'Releases loaded in DuckDB, the current one included (at most RELEASES_IN_MEMORY, more only while a release chosen for unloading is still read)',
      registers: [this.registry],
      collect() {
        this.set(sources.releases.loadedCount);
      },
    });
    new Gauge({
      name: 'dqs_release_age_seconds',
      help: "Seconds since the start of the served release's month (the data's age); absent while the first one loads",
      registers: [this.registry],
      collect() {
        this.reset();
        const id = sources.releases.current()?.id;
        if (id) this.set((sources.clock() - Date.parse(`${id}-01T00:00:00Z`)) / 1000);
      },
    });
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
