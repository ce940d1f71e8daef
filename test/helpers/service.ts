import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { request } from 'undici';
import { generateRelease } from '../../etl/generate.ts';
import { loadDrop } from '../../etl/load.ts';
import type { Clock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { type RunningService, startService } from '../../src/server.ts';
import { validateResponse } from './openapi.ts';

// Real servers on ephemeral ports over real DuckDB, for every HTTP test.

const ROOT = path.resolve(import.meta.dirname, '../../tmp/test-data');
export const FIXTURE_RELEASE = '2026-11';

/** Digest of the generator's and the registry's source, whose content decides what a seed and scale generate. */
async function generatorDigest(): Promise<string> {
  const etl = path.resolve(import.meta.dirname, '../../etl');
  const sources = (await fs.readdir(etl))
    .filter((f) => f.endsWith('.ts'))
    .sort()
    .map((f) => path.join(etl, f));
  sources.push(path.resolve(import.meta.dirname, '../../src/registry.ts'));
  const hash = createHash('sha256');
  for (const file of sources) hash.update(`${path.relative(etl, file)}\n`).update(await fs.readFile(file));
  return hash.digest('hex').slice(0, 16);
}

/**
 * A DATA_DIR holding one generated release, cached on disk across runs. The generator is
 * deterministic for its source, a seed and a scale, so the cache is keyed by all three.
 */
export async function fixtureDataDir(options: { seed?: number; scale?: number; release?: string } = {}): Promise<string> {
  const { seed = 7, scale = 0.02, release = FIXTURE_RELEASE } = options;
  const name = `seed${seed}-scale${scale}-${release}`;
  const dataDir = path.join(ROOT, `${name}-${await generatorDigest()}`);
  const dir = path.join(dataDir, release);
  if (
    !(await fs.stat(path.join(dir, 'manifest.json')).then(
      () => true,
      () => false,
    ))
  ) {
    await generateRelease({ out: dir, seed, scale, release });
    // Copies made by an earlier generator are stale for good: drop them rather than pile them up.
    const stale = (entry: string) => (entry === name || entry.startsWith(`${name}-`)) && path.join(ROOT, entry) !== dataDir;
    for (const entry of (await fs.readdir(ROOT)).filter(stale)) {
      await fs.rm(path.join(ROOT, entry), { recursive: true, force: true });
    }
  }
  return dataDir;
}

/** The month after `release` (`2026-11` → `2026-12`). */
export function nextMonth(release: string): string {
  const [year, month] = release.split('-').map(Number) as [number, number];
  return month === 12 ? `${year + 1}-01` : `${year}-${String(month + 1).padStart(2, '0')}`;
}

/**
 * A DATA_DIR holding the fixture release and, published after it by `etl load`, a
 * second one generated with seed 2: what README.md's recipe for a second release
 * makes. Cached on disk like the fixture, keyed by the same digest.
 */
export async function twoReleaseDataDir(
  options: { scale?: number } = {},
): Promise<{ dataDir: string; releases: readonly [string, string] }> {
  const { scale = 0.02 } = options;
  const fixture = await fixtureDataDir({ scale });
  const releases = [FIXTURE_RELEASE, nextMonth(FIXTURE_RELEASE)] as const;
  const dataDir = `${fixture}-and-${releases[1]}`;
  if (
    !(await fs.stat(path.join(dataDir, releases[1], 'manifest.json')).then(
      () => true,
      () => false,
    ))
  ) {
    const work = `${dataDir}.${process.pid}.tmp`;
    await fs.rm(work, { recursive: true, force: true });
    await fs.cp(fixture, work, { recursive: true });
    const drop = await tempDir('dqs-drop-');
    try {
      await generateRelease({ out: path.join(drop, releases[1]), seed: 2, scale, release: releases[1] });
      await loadDrop({
        drop: path.join(drop, releases[1]),
        dataDir: work,
        release: releases[1],
        force: false,
        minYear: 1990,
        maxYear: 2100,
        maxRowChange: 0.25,
      });
    } finally {
      await fs.rm(drop, { recursive: true, force: true });
    }
    await fs.rm(dataDir, { recursive: true, force: true });
    await fs.rename(work, dataDir);
  }
  return { dataDir, releases };
}

export const tempDir = (prefix = 'dqs-test-') => fs.mkdtemp(path.join(os.tmpdir(), prefix));

/** A DATA_DIR of its own holding the fixture's release, for a test that publishes into it. */
export async function ownFixtureDataDir(prefix: string): Promise<string> {
  const dataDir = await tempDir(prefix);
  await fs.cp(await fixtureDataDir(), dataDir, { recursive: true });
  return dataDir;
}

/** Publishes the fixture's files again into `dataDir` as the month after `release`, with `etl load`'s own function; returns the new release. */
export async function publishNextMonth(dataDir: string, release: string): Promise<string> {
  const next = nextMonth(release);
  const drop = path.join(await fixtureDataDir(), FIXTURE_RELEASE);
  await loadDrop({ drop, dataDir, release: next, force: true, minYear: 1990, maxYear: 2100, maxRowChange: 0.25 });
  return next;
}

export interface Response {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  // Parsed JSON body: tests assert on its shape, so `any` keeps them readable.
  json: any;
}

export interface TestService {
  readonly url: string;
  readonly adminUrl: string;
  readonly dataDir: string;
  readonly stateDir: string;
  readonly running: RunningService;
  /** An active key created through the admin listener. */
  readonly key: string;
  /** Log lines the service wrote, parsed. */
  readonly logs: any[];
  /** A request to the public listener; its response is checked against docs/openapi.json (helpers/openapi.ts). */
  get(
    pathAndQuery: string,
    options?: { key?: string | null; method?: string; headers?: Record<string, string | string[]> },
  ): Promise<Response>;
  admin(method: string, pathName: string, body?: unknown, token?: string): Promise<Response>;
  adminToken(): Promise<string>;
  stop(): Promise<void>;
}

export async function send(
  url: string,
  init: { method?: string; headers?: Record<string, string | string[]>; body?: string } = {},
): Promise<Response> {
  const res = await request(url, { method: (init.method ?? 'GET') as 'GET', headers: init.headers, body: init.body });
  const text = await res.body.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers as Response['headers'], text, json };
}

/**
 * Limits far above what any suite sends, so suites that make hundreds of requests on
 * one key test what they are about; limit tests pass the spec's values in `env`.
 */
const GENEROUS_LIMITS = { RATE_LIMIT_PER_MINUTE: '1000000', RATE_LIMIT_PER_DAY: '100000000', BAD_KEY_LIMIT_PER_MINUTE: '1000000' };

/** Starts the whole service (public + admin listener) on port 0 and waits for data. */
export async function startTestService(
  options: { dataDir?: string; stateDir?: string; env?: Record<string, string>; clock?: Clock } = {},
): Promise<TestService> {
  const dataDir = options.dataDir ?? (await fixtureDataDir());
  const ownsStateDir = options.stateDir === undefined;
  const stateDir = options.stateDir ?? (await tempDir());
  const config = loadConfig({
    PORT: '0',
    ADMIN_PORT: '0',
    DATA_DIR: dataDir,
    STATE_DIR: stateDir,
    DUCKDB_CONNECTIONS: '2',
    ...GENEROUS_LIMITS,
    ...options.env,
  });
  const logs: any[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) logs.push(JSON.parse(line));
      done();
    },
  });
  const running = await startService(config, createLogger('info', sink), { clock: options.clock });
  const stop = async () => {
    await running.close();
    if (ownsStateDir) await fs.rm(stateDir, { recursive: true, force: true });
  };
  try {
    await running.ready;
  } catch (err) {
    await stop();
    throw err;
  }
  const adminToken = async () => (await fs.readFile(path.join(stateDir, 'admin-token'), 'utf8')).trim();
  const admin = async (method: string, pathName: string, body?: unknown, token?: string) =>
    send(`${running.adminUrl}${pathName}`, {
      method,
      headers: {
        authorization: `Bearer ${token ?? (await adminToken())}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const created = await admin('POST', '/keys', { client: 'test-suite' });
  const key: string = created.json.key;
  return {
    url: running.url,
    adminUrl: running.adminUrl,
    dataDir,
    stateDir,
    running,
    key,
    logs,
    get: async (pathAndQuery, opts = {}) => {
      const res = await send(`${running.url}${pathAndQuery}`, {
        method: opts.method,
        headers: { ...(opts.key === null ? {} : { 'x-api-key': opts.key ?? key }), ...opts.headers },
      });
      validateResponse(opts.method ?? 'GET', pathAndQuery, res);
      return res;
    },
    admin,
    adminToken,
    stop,
  };
}

/** Follows `pagination.cursor` until `has_more` is false; returns every page. */
export async function walkPages(service: TestService, pathAndQuery: string, limit: number): Promise<any[]> {
  const pages: any[] = [];
  let cursor = '';
  for (let guard = 0; guard < 100_000; guard++) {
    const sep = pathAndQuery.includes('?') ? '&' : '?';
    const res = await service.get(`${pathAndQuery}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    if (res.status !== 200) throw new Error(`page ${pages.length + 1} of ${pathAndQuery}: ${res.status} ${res.text}`);
    pages.push(res.json);
    if (!res.json.pagination.has_more) return pages;
    cursor = res.json.pagination.cursor;
  }
  throw new Error('pagination did not end');
}

/** The text of each request's answer from a fresh server per DUCKDB_THREADS setting: what must not depend on threads or restarts. */
export async function bodiesPerThreads(paths: readonly string[], threads: readonly string[] = ['1', '3']): Promise<string[][]> {
  const bodies: string[][] = [];
  for (const setting of threads) {
    const one = await startTestService({ env: { DUCKDB_THREADS: setting } });
    try {
      bodies.push(await Promise.all(paths.map(async (p) => (await one.get(p)).text)));
    } finally {
      await one.stop();
    }
  }
  return bodies;
}
