import { watch, type FSWatcher } from 'node:fs';
import type { Logger } from 'pino';
import type { Database } from '../duckdb/database.ts';
import { POINTER_FILE, currentRelease, readPointer, verifyRelease } from '../releases/on-disk.ts';
import { ReleaseError } from '../releases/manifest.ts';
import type { CurrentRelease } from './current-release.ts';
import { dropRelease, loadRelease, type LoadedRelease } from './loader.ts';

export interface SwitchResult {
  readonly serving: string;
  readonly changed: boolean;
}

/**
 * Serves the release DATA_DIR's pointer names, and follows the pointer while running:
 * a new release is loaded beside the served one and swapped in at once (requests in
 * flight finish on the release they read). The previous one stays loaded for the
 * grace period, for cursors issued before the switch, then its tables are dropped.
 * A release that fails to load leaves the served one serving.
 *
 * Every load and drop runs one at a time: the loader replaces a schema of the same
 * id, so a release that is loaded (served or retained) is never loaded again.
 */
export class ReleaseSwitcher {
  private queue: Promise<unknown> = Promise.resolve();
  private busy = false;
  /** The pointer's release whose load failed: retried only when asked (SIGHUP, admin), not every poll. */
  private failed: string | undefined;
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** The last failure logged (pointer and reason): polls that meet it again stay quiet. */
  private lastFailure: string | undefined;

  constructor(
    private readonly options: {
      dataDir: string;
      db: Database;
      current: CurrentRelease;
      log: Logger;
      /** How often the pointer is read besides file-watch events (which some filesystems never send). */
      pollMs?: number;
      /** Called once per distinct failure (the metric). */
      onFailure?: () => void;
    },
  ) {
    // A release whose grace period ended under a request is dropped when that request ends.
    options.current.onDrained((release) => void this.serialize(() => this.drop(release)).catch(() => {}));
  }

  /** Loads what the pointer names now; rejects (and logs why) when it cannot be served. */
  reload(reason: string): Promise<SwitchResult> {
    return this.serialize(() => this.switchTo(reason, true));
  }

  /** Watches the pointer: a change is noticed within `pollMs` (1 s by default), and expired releases are dropped. */
  start(): void {
    const check = () => {
      if (this.busy) return;
      void this.serialize(async () => {
        await this.dropExpired();
        let id: string | undefined;
        try {
          id = await readPointer(this.options.dataDir);
        } catch (err) {
          return this.failure(undefined, err as Error);
        }
        if (id !== undefined && id === this.options.current.get()?.id && this.lastFailure !== undefined) {
          this.lastFailure = undefined;
          this.options.log.info({ release: id }, 'the release pointer is served again');
        }
        if (id !== undefined && id !== this.options.current.get()?.id && id !== this.failed) await this.switchTo('pointer changed', false);
      }).catch(() => {}); // switchTo has logged it
    };
    try {
      this.watcher = watch(this.options.dataDir, (_event, file) => {
        if (file === POINTER_FILE) check();
      });
      this.watcher.on('error', (err) => this.options.log.warn({ err }, 'cannot watch DATA_DIR; polling the pointer only'));
    } catch (err) {
      this.options.log.warn({ err }, 'cannot watch DATA_DIR; polling the pointer only');
    }
    this.timer = setInterval(check, this.options.pollMs ?? 1000);
    this.timer.unref();
  }

  async close(): Promise<void> {
    this.watcher?.close();
    clearInterval(this.timer);
    await this.queue.catch(() => {});
  }

  private serialize<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(async () => {
      this.busy = true;
      try {
        return await work();
      } finally {
        this.busy = false;
      }
    });
    this.queue = run.catch(() => {});
    return run;
  }

  private async switchTo(reason: string, retry: boolean): Promise<SwitchResult> {
    const { current, log, dataDir } = this.options;
    const serving = current.get();
    let id: string | undefined;
    try {
      // Named before anything else is read, so a missing folder or bad manifest is this pointer's failure.
      id = await readPointer(dataDir);
      const onDisk = await currentRelease(dataDir);
      if (!onDisk) throw new ReleaseError(`DATA_DIR ${dataDir} holds no release; publish one with \`npm run etl -- load\``);
      id = onDisk.manifest.release;
      if (serving?.id === id) return { serving: id, changed: false };
      if (!retry && this.failed === id) return { serving: serving!.id, changed: false };
      await this.dropExpired();
      const started = performance.now();
      let next = current.find(id) ?? current.revive(id);
      if (next) {
        log.info({ release: id, from: serving?.id, reason }, 'switching back to a retained release');
      } else {
        log.info({ release: id, dir: onDisk.dir, from: serving?.id, reason }, 'loading release');
        await verifyRelease(onDisk);
        next = await this.load((connection) => loadRelease(connection, onDisk, log));
      }
      current.set(next);
      this.failed = undefined;
      if (this.lastFailure !== undefined) log.info({ release: id }, 'the release pointer is served again');
      this.lastFailure = undefined;
      log.info({ release: id, from: serving?.id, retained: current.retainedIds(), ms: Math.round(performance.now() - started) }, 'serving release');
      return { serving: id, changed: true };
    } catch (err) {
      this.failed = id;
      this.failure(id, err as Error, retry);
      throw err;
    }
  }

  /**
   * Logs a failure to serve what the pointer names, once: polls meeting the same
   * failure again (same pointer, same reason) log nothing and count nothing; an
   * explicit reload (start, SIGHUP, admin) always logs.
   */
  private failure(id: string | undefined, err: Error, asked = false): void {
    const { log, current } = this.options;
    const serving = current.get();
    const key = `${id}\n${err.message}`;
    if (!asked && key === this.lastFailure) return;
    if (key !== this.lastFailure) this.options.onFailure?.();
    this.lastFailure = key;
    log.error({ err, release: id, serving: serving?.id }, serving ? `cannot switch releases, still serving ${serving.id}: ${err.message}` : `cannot load the release: ${err.message}`);
  }

  /** Drops the tables of retained releases whose grace period has ended and that no request holds. */
  private async dropExpired(): Promise<void> {
    for (const release of this.options.current.expire()) await this.drop(release);
  }

  private async drop(release: LoadedRelease): Promise<void> {
    // Switched back to while it drained: it is served again, not dropped.
    if (this.options.current.get() === release) return;
    await this.load((connection) => dropRelease(connection, release.id))
      .then(() => this.options.log.info({ release: release.id }, 'grace period over: dropped the previous release'))
      .catch((err: Error) => this.options.log.error({ err, release: release.id }, 'cannot drop an expired release'));
  }

  /** On a connection of its own: a load must not hold one of the serving connections for seconds. */
  private async load<T>(work: (connection: Awaited<ReturnType<Database['connect']>>) => Promise<T>): Promise<T> {
    const connection = await this.options.db.connect();
    try {
      return await work(connection);
    } finally {
      connection.closeSync();
    }
  }
}

