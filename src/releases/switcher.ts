import { type FSWatcher, watch } from 'node:fs';
import type { Logger } from 'pino';
import { ReleaseError } from './manifest.ts';
import { currentRelease, POINTER_FILE, type ReleaseOnDisk, readPointer } from './on-disk.ts';

export interface SwitchResult {
  readonly serving: string;
  readonly changed: boolean;
}

/** What the switcher serves releases through (src/releases/releases.ts). */
export interface Serving {
  /** The release served now; undefined before the first. */
  servedId(): string | undefined;
  isLoaded(id: string): boolean;
  /** The loaded releases besides the served one, most recently used first. */
  retained(): string[];
  /** Loads the release at `onDisk` if it is not loaded, lists DATA_DIR's releases again, and serves it from now on. */
  serve(onDisk: ReleaseOnDisk): Promise<void>;
}

/**
 * Serves the release DATA_DIR's pointer names, and follows the pointer while running:
 * a new release is loaded beside the served one and swapped in at once (requests in
 * flight finish on the release they read). The previous one stays loaded like any
 * other release (src/releases/releases.ts), so cursors issued on it keep
 * paging and switching back to it loads nothing. A release that fails to load
 * leaves the served one serving. One check or switch runs at a time; a poll that
 * comes while one runs is skipped.
 */
export class ReleaseSwitcher {
  /** The pointer's release whose load failed: retried only when asked (SIGHUP, admin), not every poll. */
  private failed: string | undefined;
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** The last failure logged (pointer and reason): polls that meet it again stay quiet. */
  private lastFailure: string | undefined;
  /** The check or switch running now, which the next one waits for. */
  private running: Promise<unknown> = Promise.resolve();
  /** Checks and switches queued or running. */
  private pending = 0;

  constructor(
    private readonly options: {
      dataDir: string;
      serving: Serving;
      log: Logger;
      /** How often the pointer is read besides file-watch events (which some filesystems never send). */
      pollMs?: number;
      /** Called once per distinct failure (the metric). */
      onFailure?: () => void;
      /** Called after every poll and switch, outside its turn: the list of published releases is read again, idle ones unloaded. */
      afterPoll?: () => Promise<void>;
    },
  ) {}

  /** Loads what the pointer names now; rejects (and logs why) when it cannot be served. */
  async reload(reason: string): Promise<SwitchResult> {
    const result = await this.inTurn(() => this.switchTo(reason, true));
    await this.afterPoll();
    return result;
  }

  /** Watches the pointer: a change is noticed within `pollMs` (1 s by default). */
  start(): void {
    const check = () => {
      if (this.pending > 0) return;
      void this.inTurn(async () => {
        let id: string | undefined;
        try {
          id = await readPointer(this.options.dataDir);
        } catch (err) {
          return this.failure(undefined, err as Error);
        }
        const served = this.options.serving.servedId();
        if (id !== undefined && id === served && this.lastFailure !== undefined) {
          this.lastFailure = undefined;
          this.options.log.info({ release: id }, 'the release pointer is served again');
        }
        if (id !== undefined && id !== served && id !== this.failed) await this.switchTo('pointer changed', false);
      })
        .catch(() => {}) // switchTo has logged it
        .then(() => this.afterPoll());
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
    await this.running;
  }

  /** Runs `work` once the check or switch before it has ended. */
  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    this.pending++;
    const run = this.running.then(work).finally(() => this.pending--);
    this.running = run.catch(() => {});
    return run;
  }

  private afterPoll(): Promise<void> {
    return (this.options.afterPoll?.() ?? Promise.resolve()).catch((err: Error) =>
      this.options.log.error({ err }, `cannot list the published releases: ${err.message}`),
    );
  }

  private async switchTo(reason: string, retry: boolean): Promise<SwitchResult> {
    const { serving, log, dataDir } = this.options;
    const served = serving.servedId();
    let id: string | undefined;
    try {
      // Named before anything else is read, so a missing folder or bad manifest is this pointer's failure.
      id = await readPointer(dataDir);
      const onDisk = await currentRelease(dataDir);
      if (!onDisk) throw new ReleaseError(`DATA_DIR ${dataDir} holds no release; publish one with \`npm run etl -- load\``);
      id = onDisk.manifest.release;
      if (served === id) return { serving: id, changed: false };
      if (!retry && this.failed === id) return { serving: served!, changed: false };
      const started = performance.now();
      if (serving.isLoaded(id)) log.info({ release: id, from: served, reason }, 'switching to a loaded release');
      else log.info({ release: id, dir: onDisk.dir, from: served, reason }, 'loading release');
      await serving.serve(onDisk);
      this.failed = undefined;
      if (this.lastFailure !== undefined) log.info({ release: id }, 'the release pointer is served again');
      this.lastFailure = undefined;
      log.info({ release: id, from: served, retained: serving.retained(), ms: Math.round(performance.now() - started) }, 'serving release');
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
    const { log } = this.options;
    const served = this.options.serving.servedId();
    const key = `${id}\n${err.message}`;
    if (!asked && key === this.lastFailure) return;
    if (key !== this.lastFailure) this.options.onFailure?.();
    this.lastFailure = key;
    log.error(
      { err, release: id, serving: served },
      served ? `cannot switch releases, still serving ${served}: ${err.message}` : `cannot load the release: ${err.message}`,
    );
  }
}
