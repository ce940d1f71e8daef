import type { Logger } from 'pino';
import type { Clock } from '../limits/limiter.ts';
import type { LoadQueue } from './load-queue.ts';
import { dropRelease, type LoadedRelease, loadRelease } from './load-release.ts';
import { verifyRelease } from './on-disk.ts';
import type { PublishedReleases } from './published.ts';
import type { ReleaseHold, ResidentReleases } from './resident.ts';

/** A published release that could not be loaded; the log has why. */
export class VintageUnavailableError extends Error {
  constructor(readonly release: string) {
    super(`release ${release} cannot be loaded`);
  }
}

/** How long a failed load is remembered before a request may try again. */
const RETRY_FAILED_MS = 60_000;

/**
 * Published releases other than the current one, loaded on demand through the same
 * loader and checks as the current one, and unloaded by ResidentReleases' rules
 * (RELEASES_IN_MEMORY, the least recently used first, never while held). Requests
 * for a release that is loading share its one load.
 */
export class Vintages {
  private readonly loading = new Map<string, Promise<void>>();
  private readonly failedAt = new Map<string, number>();

  constructor(
    private readonly options: {
      queue: LoadQueue;
      resident: ResidentReleases;
      published: PublishedReleases;
      log: Logger;
      clock: Clock;
      /** Called with each on-demand load's duration in seconds. */
      loaded?: (seconds: number) => void;
    },
  ) {
    options.resident.onOverCapacity(() => void this.trim());
  }

  /**
   * Holds published release `id`, loading it first when it is not loaded. Rejects
   * with VintageUnavailableError when its files cannot be served.
   */
  async hold(id: string): Promise<ReleaseHold> {
    // Loaded, then evicted before this request held it: load again, a few times at most.
    for (let attempt = 0; attempt < 3; attempt++) {
      const hold = this.options.resident.hold(id);
      if (hold) return hold;
      await this.load(id);
    }
    throw new VintageUnavailableError(id);
  }

  /** Drops what ResidentReleases evicts: idle, withdrawn, or beyond the capacity. */
  trim(): Promise<void> {
    return this.options.queue.run(() => this.dropEvicted(0));
  }

  private load(id: string): Promise<void> {
    const failed = this.failedAt.get(id);
    if (failed !== undefined && this.options.clock() - failed < RETRY_FAILED_MS) return Promise.reject(new VintageUnavailableError(id));
    let loading = this.loading.get(id);
    if (!loading) {
      loading = this.options.queue.run(() => this.loadNow(id)).finally(() => this.loading.delete(id));
      this.loading.set(id, loading);
    }
    return loading;
  }

  private async loadNow(id: string): Promise<void> {
    const { resident, published, log, queue } = this.options;
    if (resident.find(id)) return;
    const onDisk = published.get(id);
    if (!onDisk) throw new VintageUnavailableError(id);
    await this.dropEvicted(1);
    const started = performance.now();
    try {
      log.info({ release: id, dir: onDisk.dir }, 'loading a release on demand');
      await verifyRelease(onDisk);
      const release = await queue.withConnection((connection) => loadRelease(connection, onDisk, log));
      resident.add(release);
      // Held until the requests waiting for this load have taken their own holds (they
      // do as soon as it settles), so the next load's eviction cannot take it first.
      const bridge = resident.hold(id)!;
      setImmediate(() => bridge.letGo());
      this.failedAt.delete(id);
      const seconds = (performance.now() - started) / 1000;
      this.options.loaded?.(seconds);
      log.info(
        { release: id, ms: Math.round(seconds * 1000), loaded: [resident.get()?.id, ...resident.otherIds()] },
        'release loaded on demand',
      );
    } catch (err) {
      this.failedAt.set(id, this.options.clock());
      log.error({ err, release: id }, `cannot load release ${id} on demand: ${(err as Error).message}`);
      throw new VintageUnavailableError(id);
    }
  }

  /** Inside the queue: drops the evicted releases' tables, leaving `room` more under the capacity. */
  private async dropEvicted(room: number): Promise<void> {
    const { resident, published, log, queue } = this.options;
    for (const release of resident.evict((id) => published.kept(id), room)) await this.drop(release, queue, resident, log);
  }

  private async drop(release: LoadedRelease, queue: LoadQueue, resident: ResidentReleases, log: Logger): Promise<void> {
    // Loaded again under the same schema since it was evicted: those tables are in use.
    if (resident.find(release.id)) return;
    await queue
      .withConnection((connection) => dropRelease(connection, release.id))
      .then(() => {
        log.info({ release: release.id }, 'unloaded a release');
        collectGarbage();
      })
      .catch((err: Error) => log.error({ err, release: release.id }, 'cannot drop an unloaded release'));
  }
}

/**
 * Returns an unloaded release's memory to the system now, not at the next collection
 * V8 happens to run: its columns are typed arrays whose memory is freed only by a
 * collection, and an idle server allocates nothing that would start one (16x: 502 MB
 * still held 30 s after the unload). One full collection per unload, once this call
 * stack has let go of the release; `gc` exists when node runs with --expose-gc
 * (package.json config.nodeFlags), else the memory returns at V8's next collection.
 */
function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) setImmediate(gc);
}
