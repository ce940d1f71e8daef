import type { AddressInfo } from 'node:net';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { generateRelease } from '../etl/generate.ts';
import { createAdminApp } from './admin/app.ts';
import { createApp } from './app.ts';
import { LruResponseCache } from './cache/lru.ts';
import { NoopResponseCache } from './cache/noop.ts';
import type { Config } from './config.ts';
import { CurrentRelease } from './data/current-release.ts';
import { Database } from './data/duckdb.ts';
import { loadRelease, type LoadedRelease } from './data/loader.ts';
import { latestRelease, verifyRelease } from './data/releases.ts';
import { FileKeyStore } from './keys/file-store.ts';
import { CursorCodec } from './query/cursor.ts';
import type { Services } from './services.ts';
import { SECRET_FILES, ensureStateDir, readOrCreateSecret } from './state/secrets.ts';

export interface RunningService {
  readonly url: string;
  readonly adminUrl: string;
  readonly services: Services;
  /** Settles when the release is loaded and served (or loading failed). */
  readonly ready: Promise<LoadedRelease>;
  close(): Promise<void>;
}

/**
 * Starts both listeners at once, then loads data: /healthz answers 503 until the
 * release is in DuckDB, so an orchestrator can watch the start instead of guessing.
 */
export async function startService(config: Config, log: Logger): Promise<RunningService> {
  await ensureStateDir(config.STATE_DIR);
  const cursorSecret = await readOrCreateSecret(config.STATE_DIR, SECRET_FILES.cursor);
  const adminToken = await readOrCreateSecret(config.STATE_DIR, SECRET_FILES.adminToken);
  const keys = await FileKeyStore.open(config.STATE_DIR);
  const db = await Database.open({ connections: config.DUCKDB_CONNECTIONS, threads: config.DUCKDB_THREADS });
  const cache = config.CACHE_MAX_BYTES > 0 ? new LruResponseCache(config.CACHE_MAX_BYTES) : new NoopResponseCache();
  const release = new CurrentRelease();
  // Cache keys name the release too, but a body rendered from the old one must not outlive it.
  release.onChange(() => cache.clear());
  const services: Services = {
    db,
    release,
    cursors: new CursorCodec(Buffer.from(cursorSecret, 'hex')),
    cache,
    cacheControl: `private, max-age=${config.CACHE_MAX_AGE_SECONDS}`,
    keys,
    log,
  };

  const server = http.createServer(createApp(services).callback());
  const admin = http.createServer(createAdminApp({ keys, token: adminToken, log }).callback());
  await listen(server, config.PORT, config.HOST);
  await listen(admin, config.ADMIN_PORT, '127.0.0.1');
  const url = `http://${hostForUrl(config.HOST)}:${(server.address() as AddressInfo).port}`;
  const adminUrl = `http://127.0.0.1:${(admin.address() as AddressInfo).port}`;
  log.info({ url, adminUrl }, 'listening');

  const ready = (async () => {
    const loaded = await loadServingRelease(config, db, log);
    services.release.set(loaded);
    log.info({ release: loaded.id }, 'ready');
    if ((await keys.list()).every((k) => k.revoked_at !== null)) {
      log.warn('No active API key exists yet. Create one with: npm run --silent admin -- key create --client NAME');
    }
    return loaded;
  })();
  ready.catch(() => {}); // the caller decides what a failed load means; no unhandled rejection here

  return {
    url,
    adminUrl,
    services,
    ready,
    async close() {
      await Promise.all([stop(server), stop(admin)]);
      await ready.catch(() => {});
      db.close();
    },
  };
}

async function loadServingRelease(config: Config, db: Database, log: Logger): Promise<LoadedRelease> {
  let release = await latestRelease(config.DATA_DIR);
  if (!release) {
    const id = new Date().toISOString().slice(0, 7);
    log.info({ dataDir: config.DATA_DIR, release: id }, 'no release found: generating the sample release (about 10 s)');
    await generateRelease({ out: path.join(config.DATA_DIR, id), seed: 1, scale: 1, release: id });
    release = (await latestRelease(config.DATA_DIR))!;
  }
  log.info({ release: release.manifest.release, dir: release.dir }, 'loading release');
  await verifyRelease(release);
  const connection = await db.connect();
  // Loading sorts and renders millions of rows: worth every core, unlike the small
  // page queries, which serve more per second on one thread each.
  await connection.run(`SET threads = ${os.availableParallelism()}`);
  try {
    return await loadRelease(connection, release, log);
  } finally {
    await connection.run(`SET threads = ${config.DUCKDB_THREADS}`);
    connection.closeSync();
  }
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
