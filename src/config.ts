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
  v.pipe(
    v.optional(v.string(), String(fallback)),
    v.regex(/^\d+$/, 'Expected a positive integer'),
    v.transform(Number),
    v.minValue(1),
  );

const count = (fallback: number, unit: string, max = Number.MAX_SAFE_INTEGER) =>
  v.pipe(
    v.optional(v.string(), String(fallback)),
    v.regex(/^\d{1,15}$/, `Expected a whole number of ${unit}`),
    v.transform(Number),
    v.maxValue(max, `Expected at most ${max} ${unit}`),
  );

const dir = (fallback: string) =>
  v.pipe(v.optional(v.string(), fallback), v.minLength(1), v.transform((p) => path.resolve(p)));

export const settings = {
  HOST: { schema: v.optional(v.pipe(v.string(), v.minLength(1)), '127.0.0.1'), help: 'Address the public API listens on' },
  PORT: { schema: port(3000), help: 'Port of the public API (0 picks a free one)' },
  ADMIN_PORT: { schema: port(3001), help: 'Port of the admin listener, always bound to 127.0.0.1 (0 picks a free one)' },
  DATA_DIR: { schema: dir('./datasets'), help: 'Folder holding one sub-folder per monthly release (Parquet files + manifest.json)' },
  STATE_DIR: { schema: dir('./var'), help: 'Folder for API key hashes, the admin token and the cursor secret (kept across restarts)' },
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
    help: 'Threads one DuckDB query may use while serving (loading a release uses every core); 1 serves the most requests per second',
  },
  CACHE_MAX_BYTES: {
    schema: count(256 * 1024 * 1024, 'bytes'),
    help: 'Bound of the response cache (finished, compressed bodies) in bytes; 0 turns it off',
  },
  CACHE_MAX_AGE_SECONDS: {
    // Longer than a month would outlive the monthly release it describes.
    schema: count(86_400, 'seconds', 31 * 86_400),
    help: 'max-age of Cache-Control on successful responses: how long a client may reuse one without asking (docs/api.md)',
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
  const input = Object.fromEntries(
    Object.keys(settings).map((k) => [k, env[k] === '' ? undefined : env[k]]),
  );
  const result = v.safeParse(envSchema, input);
  if (!result.success) {
    const lines = result.issues.map((issue) => {
      const key = v.getDotPath(issue) ?? '?';
      const help = settings[key as keyof Settings]?.help ?? '';
      return `  ${key}=${JSON.stringify(input[key])}: ${issue.message} (${help})`;
    });
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return result.output as Config;
}
