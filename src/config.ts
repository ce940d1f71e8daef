import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import * as v from 'valibot';

// Every setting the service reads from its environment: one entry each, with its
// default and the help line that README and `--help` show. Nothing else reads process.env.
const port = (fallback: number) =>
  v.pipe(
    v.optional(v.string(), String(fallback)),
    v.regex(/^\d+$/, 'Expected a port number'),
    v.transform(Number),
    v.integer(),
    v.minValue(0),
    v.maxValue(65535),
  );

const positiveInt = (fallback: number) =>
  v.pipe(v.optional(v.string(), String(fallback)), v.regex(/^\d+$/, 'Expected a positive integer'), v.transform(Number), v.minValue(1));

const flag = (fallback: boolean) =>
  v.pipe(
    v.optional(v.picklist(['true', 'false', '1', '0']), fallback ? 'true' : 'false'),
    v.transform((text) => text === 'true' || text === '1'),
  );

const count = (fallback: number, unit: string, max = Number.MAX_SAFE_INTEGER) =>
  v.pipe(
    v.optional(v.string(), String(fallback)),
    v.regex(/^\d{1,15}$/, `Expected a whole number of ${unit}`),
    v.transform(Number),
    v.maxValue(max, `Expected at most ${max} ${unit}`),
  );

const dir = (fallback: string) =>
  v.pipe(
    v.optional(v.string(), fallback),
    v.minLength(1),
    v.transform((p) => path.resolve(p)),
  );

/** DATA_DIR when none is configured: the one folder `npm start` may fill with the synthetic sample. */
const UNITS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/** `5s`, `30m`, `2h`, `250ms` in milliseconds. */
const durationMs = (text: string) => {
  const [, n, unit] = /^(\d+)(ms|s|m|h)$/.exec(text)!;
  return Number(n) * UNITS[unit as keyof typeof UNITS];
};

/**
 * Why a WEBHOOK_ALLOW_CIDRS entry is refused, or undefined. A range broader than /8
 * would let webhooks reach most of a private network (10.0.0.0/8 is the widest a
 * test or a lab needs): refused so the server does not start on a typo such as /0.
 */
export function cidrProblem(entry: string): string | undefined {
  const [address, bits, extra] = entry.split('/');
  const family = net.isIPv4(address ?? '') ? 4 : net.isIPv6(address ?? '') ? 6 : 0;
  if (!family || extra !== undefined || !/^\d{1,3}$/.test(bits ?? '')) return `${entry}: expected an address range such as 127.0.0.0/8`;
  const prefix = Number(bits);
  if (prefix > (family === 4 ? 32 : 128)) return `${entry}: /${prefix} is longer than an IPv${family} address`;
  if (prefix < 8)
    return `${entry}: /${prefix} is broader than /8, which would let webhooks reach whole networks; name the ranges needed, each /8 or narrower`;
  return undefined;
}

export const DEFAULT_DATA_DIR = './datasets';

/**
 * `etl load`'s DuckDB memory bound by default: the lowest that loads every scale no
 * slower than a larger one would (docs/etl.md "Steps, memory and time" has the figures).
 */
export const ETL_MEMORY_DEFAULT = '512MB';

export const settings = {
  HOST: { schema: v.optional(v.pipe(v.string(), v.minLength(1)), '127.0.0.1'), help: 'Address the public API listens on' },
  PORT: { schema: port(3000), help: 'Port of the public API (0 picks a free one)' },
  ADMIN_PORT: { schema: port(3001), help: 'Port of the admin listener, always bound to 127.0.0.1 (0 picks a free one)' },
  DATA_DIR: { schema: dir(DEFAULT_DATA_DIR), help: 'Folder holding one sub-folder per monthly release (Parquet files + manifest.json)' },
  STATE_DIR: { schema: dir('./var'), help: 'Folder for API key hashes, the admin token and the cursor secret (kept across restarts)' },
  CLIENTS_DIR: {
    schema: dir('./dist/clients'),
    help: 'Folder of the client packages served at /clients/<language>/, one sub-folder per language, as `npm run build` writes them',
  },
  LOG_LEVEL: {
    schema: v.optional(v.picklist(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), 'info'),
    help: 'Minimum level of the JSON log lines written to stdout',
  },
  DUCKDB_CONNECTIONS: {
    schema: positiveInt(4),
    help: 'DuckDB connections serving queries concurrently (each runs one query at a time)',
  },
  DUCKDB_THREADS: {
    schema: positiveInt(1),
    help: "DuckDB's thread count for the whole instance, shared by every query and by loading a release (DuckDB has no per-query setting); 1 serves the most requests per second on 2 cores",
  },
  DUCKDB_MEMORY_LIMIT: {
    schema: v.optional(
      v.pipe(v.string(), v.regex(/^\d+(\.\d+)?\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i, 'Expected a size such as 256MB or 2GiB')),
      '256MB',
    ),
    help: "DuckDB's own memory bound; loading a release sorts whole datasets and spills past it (docs/performance.md: a 16x release's load peak)",
  },
  DUCKDB_TEMP_DIR: {
    schema: v.optional(
      v.pipe(
        v.string(),
        v.minLength(1),
        v.transform((p) => path.resolve(p)),
      ),
    ),
    help: "Folder under which DuckDB spills beyond DUCKDB_MEMORY_LIMIT, into a 0700 sub-folder of each process's own, swept of dead processes' at start (empty: STATE_DIR/duckdb-tmp)",
  },
  ETL_MEMORY_LIMIT: {
    schema: v.optional(
      v.pipe(v.string(), v.regex(/^\d+(\.\d+)?\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i, 'Expected a size such as 1GB or 512MiB')),
      ETL_MEMORY_DEFAULT,
    ),
    help: "DuckDB's memory bound while `etl load` checks, sorts and compares a month's files; past it DuckDB spills to ETL_TEMP_DIR (docs/etl.md)",
  },
  ETL_TEMP_DIR: {
    schema: v.optional(
      v.pipe(
        v.string(),
        v.minLength(1),
        v.transform((p) => path.resolve(p)),
      ),
    ),
    help: "Where `etl load` spills beyond ETL_MEMORY_LIMIT (empty: a folder of the command's own in the OS temp dir)",
  },
  HTTP_HEADERS_TIMEOUT_MS: {
    schema: positiveInt(10_000),
    help: "A connection that has not sent a request's headers within this is answered 408 and closed (slow or silent clients)",
  },
  HTTP_REQUEST_TIMEOUT_MS: {
    schema: positiveInt(30_000),
    help: 'A request (headers and body) that has not fully arrived within this is answered 408 and closed',
  },
  HTTP_KEEP_ALIVE_TIMEOUT_MS: {
    schema: positiveInt(5_000),
    help: "An idle keep-alive connection is closed after this (plus Node's 1 s grace)",
  },
  TRUST_PROXY: {
    schema: flag(false),
    help: 'Take the client address from the last X-Forwarded-For hop (set only behind a balancer that writes it)',
  },
  RATE_LIMIT_PER_MINUTE: { schema: positiveInt(100), help: 'Requests one API key may make in any rolling 60 seconds (spec section 8)' },
  RATE_LIMIT_PER_DAY: { schema: positiveInt(10_000), help: 'Requests one API key may make per UTC calendar day (spec section 8)' },
  BAD_KEY_LIMIT_PER_MINUTE: {
    schema: positiveInt(30),
    help: 'Missing or invalid API keys one client address may send in any rolling 60 seconds before it gets 429s',
  },
  PUBLIC_URL: {
    schema: v.optional(
      v.pipe(
        v.string(),
        v.regex(/^https?:\/\/[^/?#]+(\/[^?#]*)?$/, 'Expected an http:// or https:// URL without query'),
        v.transform((url) => url.replace(/\/+$/, '')),
      ),
    ),
    help: "Address clients reach the public API at, used in invite links and the feeds' links (empty: the public listener's own address, or for the feeds the request's)",
  },
  CLAIM_GUARD_PER_MINUTE: {
    schema: positiveInt(10),
    help: 'Unknown invite tokens one client address may open in any rolling 60 seconds before it gets 429s',
  },
  REDIS_URL: {
    schema: v.optional(
      v.pipe(
        v.string(),
        v.regex(/^rediss?:\/\//, 'Expected a redis:// or rediss:// URL'),
        // ioredis parses it with URL: what URL refuses would stop the start with a bare "Invalid URL".
        v.check((url) => URL.canParse(url), 'Expected a valid URL: percent-encode any / @ : # ? in the user name or password'),
      ),
    ),
    help: 'Redis shared by every replica for limits and API keys (empty: limits in memory, keys in STATE_DIR)',
  },
  REDIS_TIMEOUT_MS: { schema: positiveInt(100), help: 'Longest a request waits for Redis before the documented fallback applies' },
  BENCH_DISABLE_LIMITS: { schema: flag(false), help: 'Bench-only: count no request against any limit (never set it in production)' },
  BENCH_DISABLE_USAGE: {
    schema: flag(false),
    help: "Bench-only: count no answer in its key's usage (/v1/usage/daily), to time what counting costs (never set it in production)",
  },
  RELEASE_GRACE_SECONDS: {
    schema: count(3600, 'seconds'),
    help: 'How long a release other than the current one (the one a switch replaced, or one asked for by release=) stays loaded after its last request; a later request loads it again',
  },
  RELEASES_IN_MEMORY: {
    schema: positiveInt(3),
    help: 'Most releases loaded at once, the current one included; the least recently used other one is unloaded to make room',
  },
  RELEASE_LOAD_WAIT_MS: {
    schema: positiveInt(15_000),
    help: "Longest a request for a release that is not loaded waits for its load before a 503 with Retry-After (the load goes on for its retry: to the request's deadline, QUERY_TIMEOUT_MS, and at least 10 s)",
  },
  RELEASE_POLL_MS: {
    schema: positiveInt(1000),
    help: 'How often DATA_DIR/CURRENT is read for a new release, besides file-watch events (which network filesystems may never send)',
  },
  CACHE_MAX_BYTES: {
    schema: count(256 * 1024 * 1024, 'bytes'),
    help: 'Bound of the response cache (finished, compressed bodies) in bytes; 0 turns it off',
  },
  AGGREGATE_MAX_GROUPS: {
    schema: positiveInt(100_000),
    help: 'Most groups (subtotals included) one /v1/aggregate request may produce; more is a 400 that names the count',
  },
  HISTORY_MAX_RELEASES: {
    schema: positiveInt(60),
    help: 'Most published releases one /v1/history request may span from `from` to `to`; more is a 400 naming `from`',
  },
  FACET_VALUES: {
    schema: positiveInt(50),
    help: 'Most values /v1/facets lists per dimension, most rows first; meta.values_left_out counts the rest',
  },
  AGGREGATE_KEEP_BYTES: {
    schema: count(64 * 1024 * 1024, 'bytes'),
    help: 'Bound of the aggregate results kept whole for paging (docs/api.md "Aggregates"); a result evicted mid-walk is computed again',
  },
  ADMISSION_CONCURRENCY: {
    schema: positiveInt(os.availableParallelism()),
    help: 'Heavy jobs (an aggregate computed, a revisions diff, a filtered export, a release loaded for release=) running at once; more wait their turn, taken round-robin between keys (default: the cores)',
  },
  ADMISSION_PER_KEY: {
    schema: positiveInt(2),
    help: "Heavy jobs one API key may have running at once; its others wait, so one key's backlog never holds up another key's first request",
  },
  ADMISSION_WAIT_MS: {
    schema: positiveInt(10_000),
    help: 'Longest a heavy job waits for its turn before the request is refused with 503 and Retry-After',
  },
  QUERY_TIMEOUT_MS: {
    schema: positiveInt(15_000),
    help: 'Longest heavy work may run from its turn to the first byte of its answer; past it the work is stopped and the request answered 504 timeout (Prefer: wait=N may lower it)',
  },
  KEY_HEAVY_SECONDS_PER_MINUTE: {
    schema: v.pipe(
      v.optional(v.string(), '60'),
      v.regex(/^\d{1,9}(\.\d{1,3})?$/, 'Expected a number of seconds, such as 60 or 0.5'),
      v.transform(Number),
      v.minValue(0.001, 'Expected more than 0 seconds'),
    ),
    help: "Seconds of heavy work each API key may use in any rolling minute, charged as each ends or is stopped; past it the key's heavy requests get 429 heavy_budget (shared through Redis when REDIS_URL is set)",
  },
  EXPORT_IDLE_SECONDS: {
    schema: positiveInt(60),
    help: 'An export the client has not read from for this long is ended, and the release it reads let go',
  },
  EXPORTS_OPEN_PER_KEY: {
    schema: positiveInt(2),
    help: 'Exports one API key may have open at once; another is refused with 429 until one ends',
  },
  EXPORT_LIMIT_PER_DAY: {
    schema: positiveInt(50),
    help: 'Bulk exports (/v1/export answers of a whole file or stream) one API key may take per UTC day, besides the request limits',
  },
  USAGE_LIMIT_PER_MINUTE: {
    schema: positiveInt(30),
    help: 'Calls to /v1/usage and /v1/usage/daily one API key may make in any rolling 60 seconds; they count against no other limit',
  },
  USAGE_FLUSH_MS: {
    schema: positiveInt(10_000),
    help: "How often each process adds the usage it counted to the store (STATE_DIR/usage.json, or Redis with REDIS_URL) that /v1/usage/daily and `admin usage` read; a process's own answers show at once",
  },
  REVISIONS_KEEP_BYTES: {
    // Kept diffs are DuckDB tables, in memory within DUCKDB_MEMORY_LIMIT and spilled to
    // DUCKDB_TEMP_DIR past it: this bounds their disk, so it can hold a full-size diff.
    schema: count(1024 * 1024 * 1024, 'bytes'),
    help: 'Bound of the /v1/revisions diffs kept whole for paging, as DuckDB tables: in memory within DUCKDB_MEMORY_LIMIT, spilled to DUCKDB_TEMP_DIR past it, where kept diffs are dropped while the folder takes more on disk (docs/api.md "Revisions"); a diff evicted mid-walk is computed again',
  },
  REPLAY_MAX_BYTES: {
    schema: count(8 * 1024 * 1024, 'bytes'),
    help: 'Bound of the records that let a repeated keyed request skip its handler (docs/performance.md "Cached hits"); 0 records none',
  },
  CACHE_MAX_AGE_SECONDS: {
    // Longer than a month would outlive the monthly release it describes.
    schema: count(86_400, 'seconds', 31 * 86_400),
    help: 'max-age of Cache-Control on successful responses: how long a client may reuse one without asking (docs/api.md)',
  },
  FEED_PUBLIC: {
    schema: flag(true),
    help: 'Serve /v1/releases.atom and /v1/releases.json without a key (they hold release ids, dates and counts, never values); false makes them need one',
  },
  RELEASE_DAY: {
    // 28 at most: every month has the day.
    schema: v.optional(
      v.pipe(v.string(), v.regex(/^\d{1,2}$/, 'Expected a day of the month, 1 to 28'), v.transform(Number), v.minValue(1), v.maxValue(28)),
    ),
    help: 'Day of the month (1-28, UTC) a release is expected: /v1/releases then carries `calendar` with the next expected date and whether it is late (empty: no calendar)',
  },
  RELEASE_TOLERANCE_DAYS: {
    // Below half a month, so each publication counts for one expected day only.
    schema: count(7, 'days', 14),
    help: 'Days after RELEASE_DAY (and before it) a release still counts as on time; past them without one, `calendar.late` is true',
  },
  WEBHOOK_RETRY_SCHEDULE: {
    schema: v.pipe(
      v.optional(v.string(), '5s,5m,30m,2h,5h,10h,10h'),
      v.regex(/^\d{1,6}(ms|s|m|h)(,\d{1,6}(ms|s|m|h))*$/, 'Expected delays such as 5s,5m,30m,2h'),
      v.transform((text) => text.split(',').map(durationMs)),
    ),
    help: "Delays before each retry of a webhook delivery that failed (each ±10%, or the receiver's Retry-After when longer); past the last, the message is given up",
  },
  WEBHOOK_ALLOW_CIDRS: {
    schema: v.pipe(
      v.optional(v.string(), ''),
      v.transform((text) =>
        text
          .split(',')
          .map((entry) => entry.trim())
          .filter(Boolean),
      ),
      v.check(
        (entries) => entries.every((entry) => cidrProblem(entry) === undefined),
        (issue) => cidrProblem((issue.input as string[]).find((e) => cidrProblem(e) !== undefined)!)!,
      ),
    ),
    help: 'Comma-separated address ranges (such as 127.0.0.0/8) webhooks may be delivered to although private, loopback or link-local; none broader than /8',
  },
  WEBHOOK_ALLOW_HTTP: { schema: flag(false), help: 'Let webhook URLs be http: (unencrypted) as well as https:' },
  WEBHOOK_SETTLE_MAX_MS: {
    schema: count(120_000, 'milliseconds'),
    help: 'Longest a webhook for a new release waits for every live replica to serve it; past it the webhook is sent anyway and the delay logged',
  },
} as const;

type Settings = typeof settings;
export type Config = { readonly [K in keyof Settings]: v.InferOutput<Settings[K]['schema']> };

const envSchema = v.object(
  Object.fromEntries(Object.entries(settings).map(([k, s]) => [k, s.schema])) as {
    [K in keyof Settings]: Settings[K]['schema'];
  },
);

export class ConfigError extends Error {}

/** Validates the environment once at start; the result is passed down explicitly. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const input = Object.fromEntries(Object.keys(settings).map((k) => [k, env[k] === '' ? undefined : env[k]]));
  const result = v.safeParse(envSchema, input);
  if (!result.success) {
    const lines = result.issues.map((issue) => {
      const key = v.getDotPath(issue) ?? '?';
      const help = settings[key as keyof Settings]?.help ?? '';
      return `  ${key}=${JSON.stringify(input[key] && redactUrl(input[key]))}: ${issue.message} (${help})`;
    });
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return result.output as Config;
}

/**
 * A value as it may be printed: any user name and password of a URL (REDIS_URL)
 * replaced. Everything up to the last `@` goes, so a password holding `/`, `#` or
 * `@` unescaped is caught too, and so is a value that is not a valid URL at all.
 */
export const redactUrl = (text: string) => text.replace(/^([a-z][a-z0-9+.-]*:\/\/)?.*@/is, '$1***@');

/** For entry points: the config, or the message naming each bad setting and exit code 2. */
export function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(err.message);
    process.exit(2);
  }
}

/**
 * The consumers' query CLI (src/cli/query.ts) is a separate program from the server
 * with settings of its own; this module stays the one reader of the environment.
 */
export const queryCliEnvironment = (env: Record<string, string | undefined> = process.env) => ({
  DQS_API_KEY: env.DQS_API_KEY,
  DQS_URL: env.DQS_URL,
});
