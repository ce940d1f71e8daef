import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Database } from '../duckdb/database.ts';
import type { Metrics } from '../metrics.ts';
import { LoadFailedError, LoadRunningError, NoReleaseYetError, NotPublishedError } from './errors.ts';
import { collectGarbage, dropRelease, type LoadedRelease, loadRelease, type ReleaseHandle, releaseMemory } from './load-release.ts';
import type { Manifest } from './manifest.ts';
import { type ReleaseOnDisk, verifyRelease } from './on-disk.ts';
import type { Publication } from './publication-log.ts';
import { PublishedReleases } from './published.ts';
import { type LoadClaim, SharedLoad, untilAborted } from './shared-load.ts';
import { ReleaseSwitcher, type SwitchResult } from './switcher.ts';

export type { LoadedRelease, ReleaseHandle, ServedDataset } from './load-release.ts';
export type { LoadClaim } from './shared-load.ts';
export type { SwitchResult } from './switcher.ts';

/** A release other than the current one never changes while it is published (docs/api.md "Releases"). */
export const IMMUTABLE = 'private, max-age=31536000, immutable';

/** How long a failed load is remembered before a request may try again. */
const RETRY_FAILED_MS = 60_000;

export interface ReleasesOptions {
  readonly dataDir: string;
  readonly db: Database;
  readonly log: Logger;
  readonly clock: Clock;
  readonly metrics: Pick<Metrics, 'releaseLoadSeconds' | 'releaseLoadStoppedSeconds' | 'releaseSwitchFailures'>;
  /** A release other than the current one nobody has read for this long is unloaded (RELEASE_GRACE_SECONDS). */
  readonly graceMs: number;
  /** Most releases loaded at once, the current one included (RELEASES_IN_MEMORY). */
  readonly capacity: number;
  /** How often DATA_DIR's pointer is read besides file-watch events (RELEASE_POLL_MS). */
  readonly pollMs: number;
  /** Cache-Control of an answer read from the current release (`private, max-age=<CACHE_MAX_AGE_SECONDS>`). */
  readonly currentCacheControl: string;
}

/** A loaded release, its claims and when one was last let go. */
interface Resident {
  readonly release: LoadedRelease;
  pins: number;
  usedAt: number;
}

/**
 * The one owner of releases: which are published in DATA_DIR, which are loaded in
 * DuckDB (the current one and up to RELEASES_IN_MEMORY - 1 others), loading one when
 * it is asked for, following DATA_DIR's pointer to switch (src/releases/switcher.ts),
 * and unloading what is idle, over capacity or removed by `etl prune`.
 *
 * A caller reads a release through `acquire`, which pins it until the caller lets go,
 * so a switch never mixes two releases in one answer and no release is dropped under a
 * reader. Loads and drops take turns in DuckDB's queue for memory-heavy work
 * (Database.exclusive) and nowhere else. A load asked for by requests runs only while
 * one of them waits for it, and its running time is shared between them (TimeShares).
 * Whatever keeps answers derived from releases listens to `onChange`.
 */
export class Releases {
  private currentId: string | undefined;
  private readonly resident = new Map<string, Resident>();
  /** Loads under way, each with the callers waiting for it. */
  private readonly loading = new Map<string, SharedLoad<ReleaseHandle>>();
  private readonly failedAt = new Map<string, number>();
  /** Loads and drops under way, which close() waits for. */
  private readonly work = new Set<Promise<unknown>>();
  private readonly published: PublishedReleases;
  private readonly switcher: ReleaseSwitcher;
  private readonly listeners: Array<() => void> = [];

  constructor(private readonly options: ReleasesOptions) {
    this.published = new PublishedReleases(options.dataDir);
    this.published.onChange(() => this.changed());
    this.switcher = new ReleaseSwitcher({
      dataDir: options.dataDir,
      log: options.log,
      pollMs: options.pollMs,
      onFailure: () => options.metrics.releaseSwitchFailures.inc(),
      serving: {
        servedId: () => this.currentId,
        isLoaded: (id) => this.isLoaded(id),
        retained: () => this.retained(),
        serve: (onDisk) => this.serve(onDisk),
      },
      // Every poll lists DATA_DIR again (a release published, withdrawn or pruned) and unloads what is idle.
      afterPoll: async () => {
        if (this.currentId !== undefined) await this.published.refresh(this.currentId);
        this.trim();
      },
    });
  }

  /**
   * Calls `listener` whenever what a request may read changes: another release became
   * current, or one was published, withdrawn or removed. Whatever keeps answers or
   * results derived from releases (the response cache, kept results) drops them then.
   */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** The current release; undefined while the first one loads. */
  current(): LoadedRelease | undefined {
    return this.currentId === undefined ? undefined : this.resident.get(this.currentId)?.release;
  }

  /** The loaded releases besides the current one, most recently used first. */
  retained(): string[] {
    return this.others()
      .sort((a, b) => b.usedAt - a.usedAt)
      .map(({ release }) => release.id);
  }

  /** Releases loaded, the current one included. */
  get loadedCount(): number {
    return this.resident.size;
  }

  isLoaded(id: string): boolean {
    return this.resident.has(id);
  }

  /** Each loaded release's memory by part (columns, rollups, renderers), the current one first. */
  memory(): Array<{ release: string; parts: ReturnType<typeof releaseMemory> }> {
    const loaded = [this.current(), ...this.retained().map((id) => this.resident.get(id)?.release)];
    return loaded.flatMap((release) => (release ? [{ release: release.id, parts: releaseMemory(release) }] : []));
  }

  /**
   * Pins release `id`, or the current one, until the caller lets go of the handle. A
   * published release that is not loaded is loaded first: the callers asking for it
   * meanwhile share that one load, and each holds its pin from the moment the release
   * is added, so nothing can unload it before they read it. The claim's signal gives
   * up the wait; once every caller has given up, the load is stopped (DuckDB's
   * statement interrupted, the work between statements at its next slice) and leaves
   * nothing behind. When the load ends, each claim is told its share of its time.
   *
   * Rejects with NoReleaseYetError, NotPublishedError (a release withdrawn by a
   * rollback is refused even while it is still loaded), LoadRunningError (the claim's
   * owner waits for another release's load already), or LoadFailedError, which a
   * failed load keeps giving for a minute rather than loading again at every request.
   */
  async acquire(id?: string, claim: LoadClaim = {}): Promise<ReleaseHandle> {
    const wanted = id ?? this.currentId;
    if (wanted === undefined) throw new NoReleaseYetError();
    if (wanted !== this.currentId && !this.published.has(wanted)) throw new NotPublishedError(wanted);
    const resident = this.resident.get(wanted);
    if (resident) return this.pin(resident);
    const failed = this.failedAt.get(wanted);
    if (failed !== undefined && this.options.clock() - failed < RETRY_FAILED_MS) {
      throw new LoadFailedError(wanted, `release ${wanted} failed to load within the last minute; the log has why`);
    }
    // Another release the claim's owner waits for, or pays for while it stops.
    const { owner } = claim;
    const other = owner === undefined ? undefined : [...this.loading].find(([id, load]) => id !== wanted && load.heldBy(owner));
    if (other) throw new LoadRunningError(other[0]);
    const { signal } = claim;
    return this.claimLoad(this.published.get(wanted)!, true, claim).catch((err: Error) => {
      if (signal?.aborted && err === signal.reason) throw err;
      throw new LoadFailedError(wanted, err.message, { cause: err });
    });
  }

  /** Published release ids, newest first. */
  list(): readonly string[] {
    return this.published.list();
  }

  isPublished(id: string): boolean {
    return this.published.has(id);
  }

  /** The manifest of published release `id`. */
  manifest(id: string): Manifest | undefined {
    return this.published.get(id)?.manifest;
  }

  /** The publication log as it stands: which release was served when (publication-log.ts). */
  publications(): readonly Publication[] {
    return this.published.publications();
  }

  /** The release published before `id`, if any. */
  previous(id: string): string | undefined {
    return this.published.previous(id);
  }

  /** The Parquet file of `dataset` in release `id`, published or loaded; undefined when it is neither. */
  fileOf(id: string, dataset: string): string | undefined {
    const release = this.published.get(id) ?? this.resident.get(id)?.release;
    const entry = release?.manifest.datasets[dataset];
    return release && entry ? path.join(release.dir, entry.file) : undefined;
  }

  /** Cache-Control of an answer read from release `id`: immutable unless it is the current one (or none). */
  cacheControlFor(id: string | undefined): string {
    return id !== undefined && id !== this.currentId ? IMMUTABLE : this.options.currentCacheControl;
  }

  /** Serves the release DATA_DIR's pointer names now (start, SIGHUP, admin); rejects, logged, when it cannot be loaded. */
  reload(reason: string): Promise<SwitchResult> {
    return this.switcher.reload(reason);
  }

  /** Follows DATA_DIR's pointer from now on. */
  start(): void {
    this.switcher.start();
  }

  /** Stops following the pointer and waits for the loads and drops under way. */
  async close(): Promise<void> {
    await this.switcher.close();
    while (this.work.size > 0) await Promise.allSettled([...this.work]);
  }

  /** The switcher's: loads `onDisk` unless it is loaded, lists DATA_DIR again, and makes it current. */
  private async serve(onDisk: ReleaseOnDisk): Promise<void> {
    const id = onDisk.manifest.release;
    const loaded = this.resident.get(id);
    const handle = loaded ? this.pin(loaded) : await this.claimLoad(onDisk, false, {});
    try {
      // Listed first, so the releases the new one makes readable are published with it.
      await this.published
        .refresh(id)
        .catch((err: Error) => this.options.log.error({ err }, `cannot list the published releases: ${err.message}`));
      const previous = this.currentId === undefined ? undefined : this.resident.get(this.currentId);
      this.currentId = id;
      if (previous?.release.id === id) return;
      // Replaced now: its grace before it is unloaded as idle starts now.
      if (previous) previous.usedAt = this.options.clock();
      this.changed();
    } finally {
      handle.letGo();
    }
  }

  /**
   * Waits for release `onDisk`'s load, starting it when none is under way (after one
   * being stopped has ended); the caller's pin is taken as the release is added.
   */
  private async claimLoad(onDisk: ReleaseOnDisk, onDemand: boolean, claim: LoadClaim): Promise<ReleaseHandle> {
    const id = onDisk.manifest.release;
    let load = this.loading.get(id);
    while (load?.stopping) {
      await untilAborted(load.done, claim.signal);
      load = this.loading.get(id);
    }
    const resident = this.resident.get(id);
    if (resident) return this.pin(resident);
    if (!load) {
      load = new SharedLoad(this.options.clock);
      this.loading.set(id, load);
      load.done = this.load(onDisk, load, onDemand);
      this.track(load.done);
    }
    return load.join(claim);
  }

  /**
   * Loads `onDisk` (checksums, then its tables in DuckDB's turn, after dropping what is
   * evicted to make room) and grants it to its waiters, who share its time but not
   * the wait for the turn. Stopped, it drops what it made and is no failure.
   */
  private async load(onDisk: ReleaseOnDisk, load: SharedLoad<ReleaseHandle>, onDemand: boolean): Promise<void> {
    const { db, log, clock, metrics } = this.options;
    const { stop } = load;
    const id = onDisk.manifest.release;
    const started = performance.now();
    if (onDemand) log.info({ release: id, dir: onDisk.dir }, 'loading a release on demand');
    try {
      load.running(true);
      await verifyRelease(onDisk, stop.signal);
      load.running(false);
      let inTurn: Promise<LoadedRelease> | undefined;
      const release = await db
        .exclusive((connection) => {
          load.running(true);
          inTurn = this.dropEvicted(connection, 1).then(() => loadRelease(connection, onDisk, log, stop.signal));
          return inTurn;
        }, stop.signal)
        .catch(async (err: unknown) => {
          // Database.exclusive answers a stop at once: this load ends once its work has stopped and dropped what it made.
          await inTurn?.catch(() => {});
          throw err;
        });
      // Every waiter's pin counted as the release is added: no eviction can come between.
      // Finished as it was stopped, it is kept all the same, unpinned.
      const resident: Resident = { release, pins: load.waiting, usedAt: clock() };
      this.loading.delete(id);
      this.failedAt.delete(id);
      this.resident.set(id, resident);
      load.grant(() => this.handle(resident));
      if (onDemand) {
        const seconds = (performance.now() - started) / 1000;
        metrics.releaseLoadSeconds.observe(seconds);
        log.info({ release: id, ms: Math.round(seconds * 1000), loaded: [this.currentId, ...this.retained()] }, 'release loaded on demand');
      }
    } catch (err) {
      this.loading.delete(id);
      if (stop.signal.aborted) {
        const seconds = (performance.now() - started) / 1000;
        metrics.releaseLoadStoppedSeconds.observe(seconds);
        log.info({ release: id, ms: Math.round(seconds * 1000) }, 'stopped loading a release no request waits for any longer');
        collectGarbage();
      } else {
        this.failedAt.set(id, clock());
        if (onDemand) log.error({ err, release: id }, `cannot load release ${id} on demand: ${(err as Error).message}`);
        load.fail(err as Error);
      }
    } finally {
      load.settle();
    }
    // Every waiter may have given up: a release nobody holds may be one too many.
    this.trimIfOver();
  }

  private pin(resident: Resident): ReleaseHandle {
    resident.pins++;
    return this.handle(resident);
  }

  /** A handle on a pin already counted. */
  private handle(resident: Resident): ReleaseHandle {
    let held = true;
    return {
      release: resident.release,
      letGo: () => {
        if (!held) return;
        held = false;
        resident.pins--;
        resident.usedAt = this.options.clock();
        // An eviction that waited for this pin can happen now.
        if (resident.pins === 0) this.trimIfOver();
      },
    };
  }

  private others(): Resident[] {
    return [...this.resident.values()].filter(({ release }) => release.id !== this.currentId);
  }

  private trimIfOver(): void {
    if (this.resident.size > this.options.capacity) this.trim();
  }

  /** Drops what is evicted now (idle, withdrawn, over the capacity), in DuckDB's turn. */
  private trim(): void {
    if (this.evictable(0).length > 0) this.track(this.options.db.exclusive((connection) => this.dropEvicted(connection, 0)));
  }

  /**
   * The loaded releases that may be dropped, least recently used first: those whose
   * folder is gone from DATA_DIR, those idle for RELEASE_GRACE_SECONDS, then the least
   * recently used until `room` more fit under the capacity. The current release and
   * pinned ones stay.
   */
  private evictable(room: number): Resident[] {
    const now = this.options.clock();
    const free = this.others()
      .filter((r) => r.pins === 0)
      .sort((a, b) => a.usedAt - b.usedAt);
    let size = this.resident.size;
    return free.filter(({ release, usedAt }) => {
      const evict = !this.published.kept(release.id) || now - usedAt >= this.options.graceMs || size + room > this.options.capacity;
      if (evict) size--;
      return evict;
    });
  }

  /** Inside DuckDB's turn: forgets the evicted releases, leaving `room` more under the capacity, and drops their tables. */
  private async dropEvicted(connection: DuckDBConnection, room: number): Promise<void> {
    const { log } = this.options;
    // Forgotten at once, before the first drop waits: a request can then only load them again, behind these drops.
    const evicted = this.evictable(room);
    for (const { release } of evicted) this.resident.delete(release.id);
    for (const { release } of evicted) {
      try {
        await dropRelease(connection, release.id);
        log.info({ release: release.id }, 'unloaded a release');
        collectGarbage();
      } catch (err) {
        log.error({ err, release: release.id }, 'cannot drop an unloaded release');
      }
    }
  }

  private track(work: Promise<unknown>): void {
    const settled = work.catch(() => {});
    this.work.add(settled);
    void settled.then(() => this.work.delete(settled));
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }
}
