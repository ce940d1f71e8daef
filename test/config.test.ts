import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, loadConfig, redactUrl, settings } from '../src/config.ts';
import { createLogger } from '../src/log.ts';
import { connectRedis } from '../src/redis.ts';

const DEFAULTS = {
  HOST: '127.0.0.1',
  PORT: 3000,
  ADMIN_PORT: 3001,
  DATA_DIR: path.resolve('./datasets'),
  STATE_DIR: path.resolve('./var'),
  CLIENTS_DIR: path.resolve('./dist/clients'),
  LOG_LEVEL: 'info',
  DUCKDB_CONNECTIONS: 4,
  DUCKDB_THREADS: 1,
  DUCKDB_MEMORY_LIMIT: '256MB',
  DUCKDB_TEMP_DIR: undefined,
  ETL_MEMORY_LIMIT: '512MB',
  ETL_TEMP_DIR: undefined,
  HTTP_HEADERS_TIMEOUT_MS: 10_000,
  HTTP_REQUEST_TIMEOUT_MS: 30_000,
  HTTP_KEEP_ALIVE_TIMEOUT_MS: 5_000,
  TRUST_PROXY: false,
  RATE_LIMIT_PER_MINUTE: 100,
  RATE_LIMIT_PER_DAY: 10_000,
  BAD_KEY_LIMIT_PER_MINUTE: 30,
  PUBLIC_URL: undefined,
  CLAIM_GUARD_PER_MINUTE: 10,
  REDIS_URL: undefined,
  REDIS_TIMEOUT_MS: 100,
  BENCH_DISABLE_LIMITS: false,
  BENCH_DISABLE_USAGE: false,
  RELEASE_GRACE_SECONDS: 3600,
  RELEASES_IN_MEMORY: 3,
  RELEASE_LOAD_WAIT_MS: 15_000,
  RELEASE_POLL_MS: 1000,
  AGGREGATE_MAX_GROUPS: 100_000,
  HISTORY_MAX_RELEASES: 60,
  FACET_VALUES: 50,
  AGGREGATE_KEEP_BYTES: 67_108_864,
  REVISIONS_KEEP_BYTES: 1_073_741_824,
  EXPORT_LIMIT_PER_DAY: 50,
  USAGE_LIMIT_PER_MINUTE: 30,
  USAGE_FLUSH_MS: 10_000,
  CACHE_MAX_BYTES: 268_435_456,
  REPLAY_MAX_BYTES: 8_388_608,
  CACHE_MAX_AGE_SECONDS: 86_400,
  FEED_PUBLIC: true,
  RELEASE_DAY: undefined,
  RELEASE_TOLERANCE_DAYS: 7,
  WEBHOOK_RETRY_SCHEDULE: [5000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
  WEBHOOK_ALLOW_CIDRS: [],
  WEBHOOK_ALLOW_HTTP: false,
  WEBHOOK_SETTLE_MAX_MS: 120_000,
  ADMISSION_CONCURRENCY: os.availableParallelism(),
  ADMISSION_PER_KEY: 2,
  ADMISSION_WAIT_MS: 10_000,
  QUERY_TIMEOUT_MS: 15_000,
  KEY_HEAVY_SECONDS_PER_MINUTE: 60,
  EXPORT_IDLE_SECONDS: 60,
  EXPORTS_OPEN_PER_KEY: 2,
};

/** The ConfigError thrown for `env`; fails the test when none is thrown. */
function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    assert.instance(err, ConfigError, `${JSON.stringify(env)} threw something other than ConfigError`);
    return err as ConfigError;
  }
  assert.unreachable(`${JSON.stringify(env)} was accepted`);
  throw new Error('unreachable');
}

const config = suite('config');

config('PUBLIC_URL: an http(s) URL without query, trailing slashes dropped', () => {
  assert.is(loadConfig({ PUBLIC_URL: 'https://data.example.com/api/' }).PUBLIC_URL, 'https://data.example.com/api');
  assert.match(
    configError({ PUBLIC_URL: 'data.example.com' }).message,
    /PUBLIC_URL="data.example.com": Expected an http:\/\/ or https:\/\/ URL/,
  );
});

config('loadConfig({}) gives the documented defaults', () => {
  assert.equal(loadConfig({}), DEFAULTS);
});

config('every setting has a help line', () => {
  for (const [key, setting] of Object.entries(settings)) assert.ok(setting.help.length > 10, key);
  assert.equal(Object.keys(settings).sort(), Object.keys(DEFAULTS).sort());
});

config('valid values are parsed and directories resolved', () => {
  const parsed = loadConfig({
    HOST: '0.0.0.0',
    PORT: '0',
    ADMIN_PORT: '65535',
    DATA_DIR: 'some/data',
    STATE_DIR: '/abs/state',
    CLIENTS_DIR: 'built/clients',
    LOG_LEVEL: 'silent',
    DUCKDB_CONNECTIONS: '1',
    DUCKDB_THREADS: '8',
    DUCKDB_MEMORY_LIMIT: '2GiB',
    DUCKDB_TEMP_DIR: '/abs/spill',
    ETL_MEMORY_LIMIT: '512MiB',
    ETL_TEMP_DIR: 'etl/spill',
    TRUST_PROXY: 'true',
    RATE_LIMIT_PER_MINUTE: '5',
    RATE_LIMIT_PER_DAY: '50',
    BAD_KEY_LIMIT_PER_MINUTE: '3',
    PUBLIC_URL: 'https://data.example.com',
    CLAIM_GUARD_PER_MINUTE: '5',
    REDIS_URL: 'redis://127.0.0.1:6380/2',
    REDIS_TIMEOUT_MS: '250',
    BENCH_DISABLE_LIMITS: 'true',
    RELEASE_GRACE_SECONDS: '60',
    RELEASE_POLL_MS: '250',
    AGGREGATE_MAX_GROUPS: '500',
    HISTORY_MAX_RELEASES: '12',
    FACET_VALUES: '7',
    AGGREGATE_KEEP_BYTES: '0',
    CACHE_MAX_BYTES: '0',
    REPLAY_MAX_BYTES: '1024',
    CACHE_MAX_AGE_SECONDS: '2678400',
    WEBHOOK_RETRY_SCHEDULE: '250ms,2s,1m,1h',
    WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8, 10.1.0.0/16',
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_SETTLE_MAX_MS: '5000',
    ADMISSION_CONCURRENCY: '16',
    ADMISSION_WAIT_MS: '500',
  });
  assert.equal(parsed, {
    HOST: '0.0.0.0',
    PORT: 0,
    ADMIN_PORT: 65535,
    DATA_DIR: path.resolve('some/data'),
    STATE_DIR: '/abs/state',
    CLIENTS_DIR: path.resolve('built/clients'),
    LOG_LEVEL: 'silent',
    DUCKDB_CONNECTIONS: 1,
    DUCKDB_THREADS: 8,
    DUCKDB_MEMORY_LIMIT: '2GiB',
    DUCKDB_TEMP_DIR: '/abs/spill',
    ETL_MEMORY_LIMIT: '512MiB',
    ETL_TEMP_DIR: path.resolve('etl/spill'),
    HTTP_HEADERS_TIMEOUT_MS: 10_000,
    HTTP_REQUEST_TIMEOUT_MS: 30_000,
    HTTP_KEEP_ALIVE_TIMEOUT_MS: 5_000,
    TRUST_PROXY: true,
    RATE_LIMIT_PER_MINUTE: 5,
    RATE_LIMIT_PER_DAY: 50,
    BAD_KEY_LIMIT_PER_MINUTE: 3,
    PUBLIC_URL: 'https://data.example.com',
    CLAIM_GUARD_PER_MINUTE: 5,
    REDIS_URL: 'redis://127.0.0.1:6380/2',
    REDIS_TIMEOUT_MS: 250,
    BENCH_DISABLE_LIMITS: true,
    BENCH_DISABLE_USAGE: false,
    RELEASE_GRACE_SECONDS: 60,
    RELEASES_IN_MEMORY: 3,
    RELEASE_LOAD_WAIT_MS: 15_000,
    RELEASE_POLL_MS: 250,
    AGGREGATE_MAX_GROUPS: 500,
    HISTORY_MAX_RELEASES: 12,
    FACET_VALUES: 7,
    AGGREGATE_KEEP_BYTES: 0,
    REVISIONS_KEEP_BYTES: 1_073_741_824,
    EXPORT_LIMIT_PER_DAY: 50,
    USAGE_LIMIT_PER_MINUTE: 30,
    USAGE_FLUSH_MS: 10_000,
    CACHE_MAX_BYTES: 0,
    REPLAY_MAX_BYTES: 1024,
    CACHE_MAX_AGE_SECONDS: 2_678_400,
    FEED_PUBLIC: true,
    RELEASE_DAY: undefined,
    RELEASE_TOLERANCE_DAYS: 7,
    WEBHOOK_RETRY_SCHEDULE: [250, 2000, 60_000, 3_600_000],
    WEBHOOK_ALLOW_CIDRS: ['127.0.0.0/8', '10.1.0.0/16'],
    WEBHOOK_ALLOW_HTTP: true,
    WEBHOOK_SETTLE_MAX_MS: 5000,
    ADMISSION_CONCURRENCY: 16,
    ADMISSION_PER_KEY: 2,
    ADMISSION_WAIT_MS: 500,
    QUERY_TIMEOUT_MS: 15_000,
    KEY_HEAVY_SECONDS_PER_MINUTE: 60,
    EXPORT_IDLE_SECONDS: 60,
    EXPORTS_OPEN_PER_KEY: 2,
  });
});

config('variables the service does not know are ignored', () => {
  assert.equal(loadConfig({ PATH: '/usr/bin', HOME: '/root', NODE_ENV: 'production' }), DEFAULTS);
});

const INVALID: Array<[string, string]> = [
  ['PORT', 'abc'],
  ['PORT', '70000'],
  ['PORT', '-1'],
  ['PORT', '3000.5'],
  ['ADMIN_PORT', '65536'],
  ['ADMIN_PORT', 'x'],
  ['DUCKDB_CONNECTIONS', '0'],
  ['DUCKDB_CONNECTIONS', 'many'],
  ['DUCKDB_THREADS', '0'],
  ['LOG_LEVEL', 'loud'],
  ['LOG_LEVEL', 'INFO'],
  ['DUCKDB_MEMORY_LIMIT', 'lots'],
  ['DUCKDB_MEMORY_LIMIT', '400'],
  ['HTTP_HEADERS_TIMEOUT_MS', '0'],
  ['TRUST_PROXY', 'yes'],
  ['RATE_LIMIT_PER_MINUTE', '0'],
  ['RATE_LIMIT_PER_DAY', '1e4'],
  ['BAD_KEY_LIMIT_PER_MINUTE', '-1'],
  ['REDIS_URL', 'localhost:6379'],
  ['REDIS_TIMEOUT_MS', '0'],
  ['BENCH_DISABLE_LIMITS', 'yes'],
  ['CACHE_MAX_BYTES', '256MB'],
  ['CACHE_MAX_BYTES', '-1'],
  ['CACHE_MAX_AGE_SECONDS', '2678401'],
  ['CACHE_MAX_AGE_SECONDS', '1.5'],
  ['ADMISSION_CONCURRENCY', '0'],
  ['ADMISSION_PER_KEY', 'two'],
  ['EXPORT_IDLE_SECONDS', '-5'],
];

config('invalid values throw ConfigError naming the variable and the value', () => {
  for (const [key, value] of INVALID) {
    const err = configError({ [key]: value });
    // One line per problem, starting with the variable (so PORT is not matched inside ADMIN_PORT).
    const line = err.message.split('\n').find((l) => l.trimStart().startsWith(`${key}=`));
    assert.ok(line, `${key}=${value}: message does not name ${key}: ${err.message}`);
    assert.ok(line.includes(JSON.stringify(value)), `${key}=${value}: message does not show the value: ${line}`);
    assert.ok(line.includes(settings[key as keyof typeof settings].help), `${key}=${value}: message lacks the help line: ${line}`);
    // Only the broken variable is reported.
    assert.is(err.message.split('\n').filter((l) => /^\s+[A-Z_]+=/.test(l)).length, 1, err.message);
  }
});

config('every invalid variable is reported at once', () => {
  const err = configError({ PORT: 'abc', DUCKDB_CONNECTIONS: '0', LOG_LEVEL: 'loud' });
  for (const key of ['PORT', 'DUCKDB_CONNECTIONS', 'LOG_LEVEL']) {
    assert.ok(
      err.message.split('\n').some((l) => l.trimStart().startsWith(`${key}=`)),
      `${key} missing from ${err.message}`,
    );
  }
});

config('empty strings fall back to the defaults', () => {
  const empty = Object.fromEntries(Object.keys(settings).map((k) => [k, '']));
  assert.equal(loadConfig(empty), DEFAULTS);
  for (const key of Object.keys(settings)) assert.equal(loadConfig({ [key]: '' }), DEFAULTS, key);
});

config('a rejected REDIS_URL is printed without its user name and password, even with / or @ in the password', () => {
  for (const [url, shown] of [
    ['http://admin:s3cret/pw@cache.internal:6379/0', 'http://***@cache.internal:6379/0'],
    ['redis://:s3cret/pw@cache.internal:6379', 'redis://***@cache.internal:6379'],
    ['redis://admin:s3c#ret?pw@cache.internal', 'redis://***@cache.internal'],
    ['admin:s3cret@cache.internal:6379', '***@cache.internal:6379'],
  ]) {
    const err = configError({ REDIS_URL: url! });
    assert.not.ok(/s3c|ret|pw|admin/.test(err.message), err.message);
    assert.ok(err.message.includes(`REDIS_URL=${JSON.stringify(shown)}: Expected a`), err.message);
  }
});

config('redactUrl leaves a URL without credentials as it is', () => {
  assert.is(redactUrl('redis://127.0.0.1:6380/2'), 'redis://127.0.0.1:6380/2');
  assert.is(redactUrl('rediss://user:pa%2Fss@host:6380'), 'rediss://***@host:6380');
});

config('connectRedis: neither its error nor its log lines show the password, @ in it included', async () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const url = 'redis://admin:s3cret@pw@127.0.0.1:1';
  assert.ok(loadConfig({ REDIS_URL: url }).REDIS_URL, 'URL takes the last @ as the end of the password');
  const err = await connectRedis(url, 100, createLogger('info', sink)).then(
    () => assert.unreachable('connected to port 1'),
    (e: Error) => e,
  );
  assert.match(err!.message, /^REDIS_URL=redis:\/\/\*\*\*@127\.0\.0\.1:1: cannot connect/);
  assert.ok(lines.length > 0, 'the connection error was logged');
  for (const text of [err!.message, ...lines]) assert.not.ok(/s3cret|pw@|admin/.test(text), text);
});

config.run();
