import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Logger } from 'pino';
import { createAdminApp } from './admin/app.ts';
import { OpenExports } from './admission/open-exports.ts';
import { Admission } from './admission/queue.ts';
import { createApp } from './app.ts';
import { LruResponseCache } from './cache/lru.ts';
import { NoopResponseCache } from './cache/noop.ts';
import type { Clock } from './clock.ts';
import type { Config } from './config.ts';
import { Database } from './duckdb/database.ts';
import { createHttpServer } from './http/node-server.ts';
import { FileInviteStore } from './invites/file-store.ts';
import { RedisInviteStore } from './invites/redis-store.ts';
import { FileKeyStore } from './keys/file-store.ts';
import { RedisKeyStore } from './keys/redis-store.ts';
import type { HeavyBudget } from './limits/budget.ts';
import type { Limiter, LimitPolicy } from './limits/limiter.ts';
import { MemoryLimiter } from './limits/memory.ts';
import { MemoryBudget } from './limits/memory-budget.ts';
import { NoopLimiter } from './limits/noop.ts';
import { NoopBudget } from './limits/noop-budget.ts';
import { RedisLimiter } from './limits/redis.ts';
import { RedisBudget } from './limits/redis-budget.ts';
import { Metrics } from './metrics.ts';
import { ReleaseEvents } from './notify/release-event.ts';
import { resultBytes } from './query/aggregate.ts';
import { CursorCodec } from './query/cursor.ts';
import type { HistoryTable } from './query/history.ts';
import { KeptResults } from './query/kept-results.ts';
import type { RevisionDiff } from './query/revisions.ts';
import { connectRedis } from './redis.ts';
import { ReleaseError } from './releases/manifest.ts';
import { currentRelease } from './releases/on-disk.ts';
import { Releases, type SwitchResult } from './releases/releases.ts';
import type { Services } from './services.ts';
import { openProcessFolder, openScratch } from './state/scratch.ts';
import { ensureStateDir, readOrCreateSecret, SECRET_FILES } from './state/secrets.ts';
import { countedBudget, countedExports } from './usage/counted.ts';
import { FileUsageStore } from './usage/file-store.ts';
import { RedisUsageStore } from './usage/redis-store.ts';
import { UsageLog } from './usage/usage-log.ts';
import { openWebhooks } from './webhooks/open.ts';

export interface RunningService {
  readonly url: string;
  readonly adminUrl: string;
  readonly services: Services;
  /**
   * Settles with the id of the first release once it is loaded and served, or rejects
   * if loading failed. The id, not the release: a promise kept for the process's life
   * must not keep a release's memory after it is unloaded.
   */
  readonly ready: Promise<string>;
  /** Serves the release DATA_DIR's pointer names now (SIGHUP, POST /releases/reload); rejects if it cannot be loaded. */
  reload(reason: string): Promise<SwitchResult>;
  close(): Promise<void>;
}

/**
 * Starts both listeners at once, then loads data: /healthz answers 503 until the
 * release is in DuckDB, so an orchestrator can watch the start instead of guessing.
 */
export interface StartOptions {
  /** Time for the limiters, key uses and release residency (tests move it). */
  readonly clock?: Clock;
}

export async function startService(config: Config, log: Logger, options: StartOptions = {}): Promise<RunningService> {
  // An empty or unmounted DATA_DIR must stop the start, not serve invented figures.
  if (!(await currentRelease(config.DATA_DIR))) {
    throw new ReleaseError(
      `DATA_DIR ${config.DATA_DIR} holds no release; publish one with \`npm run etl -- load FOLDER_OF_PARQUET_FILES --data-dir ${config.DATA_DIR}\` (docs/etl.md), or point DATA_DIR at the folder that holds them`,
    );
  }
  await ensureStateDir(config.STATE_DIR);
  const scratchDir = await openScratch(config.STATE_DIR);
  const cursorSecret = await readOrCreateSecret(config.STATE_DIR, SECRET_FILES.cursor);
  const adminToken = await readOrCreateSecret(config.STATE_DIR, SECRET_FILES.adminToken);
  const clock = options.clock ?? Date.now;
  const metrics = new Metrics();
  const redisError = () => metrics.redisErrors.inc();
  const redis = config.REDIS_URL ? await connectRedis(config.REDIS_URL, config.REDIS_TIMEOUT_MS, log, redisError) : undefined;
  const dataLost = (store: 'keys' | 'invites') => () => metrics.redisDataLost.inc({ store });
  const keys = redis ? await RedisKeyStore.open(redis, log, { onDataLost: dataLost('keys') }) : await FileKeyStore.open(config.STATE_DIR);
  const limiter = (policy: LimitPolicy, prefix: string): Limiter => {
    if (config.BENCH_DISABLE_LIMITS) return new NoopLimiter(policy, clock);
    // Without an injected clock Redis keeps the time, so replicas agree on it.
    return redis
      ? new RedisLimiter(policy, { redis, prefix, log, clock: options.clock, onError: redisError })
      : new MemoryLimiter(policy, clock);
  };
  const heavyBudget = (): HeavyBudget => {
    const perMinuteMs = config.KEY_HEAVY_SECONDS_PER_MINUTE * 1000;
    if (config.BENCH_DISABLE_LIMITS) return new NoopBudget(perMinuteMs);
    return redis
      ? new RedisBudget(perMinuteMs, { redis, prefix: 'dqs:heavy:key:', log, clock: options.clock, onError: redisError })
      : new MemoryBudget(perMinuteMs, clock);
  };
  const usageLog = new UsageLog(
    redis ? new RedisUsageStore(redis) : await FileUsageStore.open(config.STATE_DIR, clock),
    clock,
    config.USAGE_FLUSH_MS,
  );
  const usage = {
    log: usageLog,
    guard: limiter({ perMinute: config.USAGE_LIMIT_PER_MINUTE }, 'dqs:limit:usage:'),
    backend: config.BENCH_DISABLE_LIMITS ? ('disabled' as const) : redis ? ('redis' as const) : ('memory' as const),
    counting: !config.BENCH_DISABLE_USAGE,
  };
  const limits = {
    requests: limiter({ perMinute: config.RATE_LIMIT_PER_MINUTE, perDay: config.RATE_LIMIT_PER_DAY }, 'dqs:limit:key:'),
    badKeys: limiter({ perMinute: config.BAD_KEY_LIMIT_PER_MINUTE }, 'dqs:limit:address:'),
    // A day budget: its minute window is as large, so it never binds first.
    exports: countedExports(
      limiter({ perMinute: config.EXPORT_LIMIT_PER_DAY, perDay: config.EXPORT_LIMIT_PER_DAY }, 'dqs:limit:export:'),
      usageLog,
    ),
    claims: limiter({ perMinute: config.CLAIM_GUARD_PER_MINUTE }, 'dqs:limit:claim:'),
    heavy: countedBudget(heavyBudget(), usageLog),
  };
  const invites = redis
    ? await RedisInviteStore.open(redis, log, { onDataLost: dataLost('invites') })
    : await FileInviteStore.open(config.STATE_DIR);
  if (config.BENCH_DISABLE_LIMITS) log.warn('BENCH_DISABLE_LIMITS=true: no request is counted against any limit (bench-only)');
  const db = await Database.open({
    connections: config.DUCKDB_CONNECTIONS,
    threads: config.DUCKDB_THREADS,
    memoryLimit: config.DUCKDB_MEMORY_LIMIT,
    tempDirectory: await openProcessFolder(config.DUCKDB_TEMP_DIR ?? path.join(config.STATE_DIR, 'duckdb-tmp')),
    timings: { waited: (s) => metrics.poolWaitSeconds.observe(s), held: (s) => metrics.querySeconds.observe(s) },
  });
  const cursors = new CursorCodec(Buffer.from(cursorSecret, 'hex'));
  const releases = new Releases({
    dataDir: config.DATA_DIR,
    db,
    log,
    clock,
    metrics,
    graceMs: config.RELEASE_GRACE_SECONDS * 1000,
    capacity: config.RELEASES_IN_MEMORY,
    pollMs: config.RELEASE_POLL_MS,
    currentCacheControl: `private, max-age=${config.CACHE_MAX_AGE_SECONDS}`,
  });
  const releaseEvents = new ReleaseEvents({ dataDir: config.DATA_DIR, db, publications: () => releases.publications() });
  let listening = '';
  const webhooks = await openWebhooks({
    config,
    redis,
    keys,
    releases,
    releaseEvents,
    baseUrl: () => config.PUBLIC_URL ?? listening,
    clock,
    log,
    metrics,
  });
  const cache = config.CACHE_MAX_BYTES > 0 ? new LruResponseCache(config.CACHE_MAX_BYTES) : new NoopResponseCache();
  const aggregates = new KeptResults({
    maxBytes: config.AGGREGATE_KEEP_BYTES,
    sizeOf: resultBytes,
    counted: () => metrics.aggregateComputations.inc(),
    clock,
  });
  const revisions = new KeptResults<RevisionDiff>({
    maxBytes: config.REVISIONS_KEEP_BYTES,
    sizeOf: (diff) => diff.bytes,
    counted: () => metrics.revisionComputations.inc(),
    clock,
    dispose: (diff) => diff.retire(),
    // DuckDB spills kept tables past DUCKDB_MEMORY_LIMIT: the bound holds on disk too.
    overBound: async () => (await db.tempBytes()) > config.REVISIONS_KEEP_BYTES,
  });
  // Beside the diffs, within a bound of the same size: a history is as large as a diff of as many releases' rows.
  const history = new KeptResults<HistoryTable>({
    maxBytes: config.REVISIONS_KEEP_BYTES,
    sizeOf: (table) => table.bytes,
    counted: () => metrics.historyComputations.inc(),
    clock,
    dispose: (table) => table.retire(),
    overBound: async () => (await db.tempBytes()) > config.REVISIONS_KEEP_BYTES,
  });
  // Cache keys name the release, and a release's answers never change while it is
  // published: emptied when another release becomes current (the old current's bodies
  // are rarely asked for again), and when one is published, withdrawn or removed.
  releases.onChange(() => {
    cache.clear();
    aggregates.forgetUnless((id) => releases.isPublished(id));
    revisions.forgetUnless((id) => releases.isPublished(id));
    history.forgetUnless((id) => releases.isPublished(id));
  });
  const admission = new Admission({
    concurrency: config.ADMISSION_CONCURRENCY,
    perKey: config.ADMISSION_PER_KEY,
    maxWaitMs: config.ADMISSION_WAIT_MS,
    clock,
    observe: { waited: (kind, s) => metrics.admissionWaitSeconds.observe({ kind }, s) },
  });
  metrics.observe({ cache, releases, duckdbMemory: () => db.memory(), admission, clock });
  const exports = { open: new OpenExports(config.EXPORTS_OPEN_PER_KEY), idleMs: config.EXPORT_IDLE_SECONDS * 1000 };
  const services: Services = {
    db,
    releases,
    releaseEvents,
    notifications: {
      feedsPublic: config.FEED_PUBLIC,
      publicUrl: config.PUBLIC_URL,
      calendar: config.RELEASE_DAY === undefined ? undefined : { day: config.RELEASE_DAY, toleranceDays: config.RELEASE_TOLERANCE_DAYS },
    },
    webhooks,
    releaseLoadWaitMs: config.RELEASE_LOAD_WAIT_MS,
    queryTimeoutMs: config.QUERY_TIMEOUT_MS,
    cursors,
    aggregates,
    aggregateMaxGroups: config.AGGREGATE_MAX_GROUPS,
    facetValues: config.FACET_VALUES,
    revisions,
    history,
    historyMaxReleases: config.HISTORY_MAX_RELEASES,
    cache,
    keys,
    limits,
    usage,
    invites,
    admission,
    exports,
    scratchDir,
    clientsDir: config.CLIENTS_DIR,
    clock,
    log,
    metrics,
  };

  const timeouts = {
    headersMs: config.HTTP_HEADERS_TIMEOUT_MS,
    requestMs: config.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveMs: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
  };
  const server = createHttpServer(
    createApp(services, { trustProxy: config.TRUST_PROXY, replayMaxBytes: config.REPLAY_MAX_BYTES }).callback(),
    timeouts,
    log,
  );
  await listen(server, config.PORT, config.HOST);
  const url = `http://${hostForUrl(config.HOST)}:${(server.address() as AddressInfo).port}`;
  listening = url;
  const adminApp = createAdminApp({
    keys,
    invites,
    webhooks: webhooks.store,
    releases: { reload: () => releases.reload('admin request'), retained: () => releases.retained() },
    publicUrl: config.PUBLIC_URL ?? url,
    clock,
    token: adminToken,
    log,
    metrics,
    usage: usageLog,
  });
  const admin = createHttpServer(adminApp.callback(), timeouts, log.child({ listener: 'admin' }));
  await listen(admin, config.ADMIN_PORT, '127.0.0.1');
  const adminUrl = `http://127.0.0.1:${(admin.address() as AddressInfo).port}`;
  log.info({ url, adminUrl }, 'listening');

  const ready = (async () => {
    await releases.reload('start');
    const { id } = releases.current()!;
    log.info({ release: id }, 'ready');
    releases.start();
    // After the first load: a replica reports the release it serves before it sends anything.
    webhooks.delivery.start();
    if ((await keys.list()).every((k) => k.revoked_at !== null)) {
      log.warn('No active API key exists yet. Create one with: npm run --silent admin -- key create --client NAME');
    }
    return id;
  })();
  ready.catch(() => {}); // the caller decides what a failed load means; no unhandled rejection here

  return {
    url,
    adminUrl,
    services,
    ready,
    reload: (reason) => releases.reload(reason),
    async close() {
      await Promise.all([stop(server), stop(admin)]);
      await ready.catch(() => {});
      await webhooks.delivery.close();
      await releases.close();
      db.close();
      await Promise.all([
        keys.close(),
        invites.close(),
        webhooks.store.close(),
        usage.guard.close(),
        ...Object.values(limits).map((limiter) => limiter.close()),
      ]);
      // After the listeners: the last answers are counted; before Redis goes.
      await usageLog.close();
      redis?.disconnect();
    },
  };
}

const hostForUrl = (host: string) => (host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host);

function listen(server: http.Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Stops accepting, lets in-flight requests finish, and drops idle keep-alive sockets. */
function stop(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}
