import path from 'node:path';
import type { Logger } from 'pino';
import type { Database } from '../duckdb/database.ts';
import { InvalidCursorError, NotReadyError, ReleaseLoadingError, ReleaseUnavailableError, UnknownReleaseError } from '../errors.ts';
import type { Clock } from '../limits/limiter.ts';
import type { Metrics } from '../metrics.ts';
import { LoadQueue } from './load-queue.ts';
import { type LoadedRelease, releaseMemory } from './load-release.ts';
import type { Manifest } from './manifest.ts';
import { PublishedReleases } from './published.ts';
import { type ReleaseHold, ResidentReleases } from './resident.ts';
import { ReleaseSwitcher, type SwitchResult } from './switcher.ts';
import { Vintages, VintageUnavailableError } from './vintages.ts';

export type { LoadedRelease, ServedDataset } from './load-release.ts';
export type { ReleaseHold } from './resident.ts';

/** Runs a load in the caller's turn (the HTTP layer's admission for heavy work). */
export type Admit = (load: () => Promise<ReleaseHold>) => Promise<ReleaseHold>;
export type { SwitchResult } from './switcher.ts';

/** A release other than the current one never changes while it is published (docs/api.md "Releases"). */
export const IMMUTABLE = 'private, max-age=31536000, immutable';

export interface ReleasesOptions {
  readonly dataDir: string;
  readonly db: Database;
  readonly log: Logger;
  readonly clock: Clock;
  readonly metrics: Pick<Metrics, 'releaseLoadSeconds' | 'releaseSwitchFailures'>;
  /** A release other than the current one nobody has read for this long is unloaded (RELEASE_GRACE_SECONDS). */
  readonly graceMs: number;
  /** Most releases loaded at once, the current one included (RELEASES_IN_MEMORY). */
  readonly capacity: number;
  /** Longest a request waits for a release to load (RELEASE_LOAD_WAIT_MS). */
  readonly loadWaitMs: number;
  /** How often DATA_DIR's pointer is read besides file-watch events (RELEASE_POLL_MS). */
  readonly pollMs: number;
  /** Cache-Control of an answer read from the current release (`private, max-age=<CACHE_MAX_AGE_SECONDS>`). */
  readonly currentCacheControl: string;
  /** The release a cursor names, unverified (the cursor's MAC is checked where it is decoded). */
  readonly releaseOfCursor: (cursor: string) => string | undefined;
}

/**
 * The one owner of releases: which are published in DATA_DIR, which are loaded (the
 * current one and those kept beside it), loading one on demand through one queue,
 * following DATA_DIR's pointer to switch, and unloading what is idle, over capacity
 * or removed by `etl prune`. A request reaches a release's data with `hold`, and
 * whatever keeps answers derived from releases listens to `onChange`.
 */
export class Releases {
  private readonly resident: ResidentReleases;
  private readonly published: PublishedReleases;
  private readonly queue: LoadQueue;
  private readonly vintages: Vintages;
  private readonly switcher: ReleaseSwitcher;
  private readonly listeners: Array<() => void> = [];

  constructor(private readonly options: ReleasesOptions) {
    const { dataDir, db, log, clock, metrics } = options;
    this.resident = new ResidentReleases(clock, { idleMs: options.graceMs, capacity: options.capacity });
    this.published = new PublishedReleases(dataDir);
    this.queue = new LoadQueue(db);
    this.vintages = new Vintages({
      queue: this.queue,
      resident: this.resident,
      published: this.published,
      log,
      clock,
      loaded: (s) => metrics.releaseLoadSeconds.observe(s),
    });
    this.switcher = new ReleaseSwitcher({
      dataDir,
      queue: this.queue,
      current: this.resident,
      published: this.published,
      log,
      pollMs: options.pollMs,
      onFailure: () => metrics.releaseSwitchFailures.inc(),
      // Every poll lists DATA_DIR again (a release published, withdrawn or pruned) and unloads what is idle.
      afterPoll: async () => {
        const current = this.resident.get();
        if (current) await this.published.refresh(current.id);
        await this.vintages.trim();
      },
    });
    const changed = () => {
      for (const listener of this.listeners) listener();
    };
    this.resident.onChange(changed);
    this.published.onChange(changed);
  }

  /**
   * Calls `listener` whenever what a request may read changes: another release became
   * current, or one was published, withdrawn or removed. Whatever keeps answers or
   * results derived from releases (the response cache, kept results, replay records)
   * drops them then.
   */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** The current release; undefined while the first one loads. */
  current(): LoadedRelease | undefined {
    return this.resident.get();
  }

  /** The loaded releases besides the current one, most recently used first. */
  retained(): string[] {
    return this.resident.otherIds();
  }

  /** Releases loaded, the current one included. */
  get loadedCount(): number {
    return this.resident.size;
  }

  /** Each loaded release's memory by part (columns, rollups, renderers), the current one first. */
  memory(): Array<{ release: string; parts: ReturnType<typeof releaseMemory> }> {
    const loaded = [this.resident.get(), ...this.retained().map((id) => this.resident.find(id))];
    return loaded.flatMap((release) => (release ? [{ release: release.id, parts: releaseMemory(release) }] : []));
  }

  /**
   * Holds the release a request reads, for the caller to let go when it has answered:
   * the one `release` names, else the one `cursor` was issued on, else the current
   * one. A published release that is not loaded is loaded first, waiting at most
   * RELEASE_LOAD_WAIT_MS, through `admit` (the caller's turn for heavy work) when
   * given. A cursor whose release is no longer published is invalid.
   */
  async hold(asked: { readonly release?: string; readonly cursor?: string; readonly admit?: Admit }): Promise<ReleaseHold> {
    const current = this.resident.get();
    if (!current) throw new NotReadyError();
    const id = asked.release ?? (asked.cursor === undefined ? undefined : this.options.releaseOfCursor(asked.cursor));
    if (id === undefined || id === current.id) return this.resident.hold()!;
    // Before the loaded ones: a release withdrawn by a rollback may still be loaded.
    if (!this.published.has(id)) throw asked.release === undefined ? new InvalidCursorError() : new UnknownReleaseError(id);
    return this.resident.hold(id) ?? (asked.admit ? asked.admit(() => this.loadAndHold(id)) : this.loadAndHold(id));
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

  /** The release published before `id`, if any. */
  previous(id: string): string | undefined {
    return this.published.previous(id);
  }

  /** The Parquet file of `dataset` in release `id`, published or loaded; UnknownReleaseError when it is neither. */
  fileOf(id: string, dataset: string): string {
    const release = this.published.get(id) ?? this.resident.find(id);
    const entry = release?.manifest.datasets[dataset];
    if (!release || !entry) throw new UnknownReleaseError(id);
    return path.join(release.dir, entry.file);
  }

  /** Cache-Control of an answer read from release `id`: immutable unless it is the current one (or none). */
  cacheControlFor(id: string | undefined): string {
    return id !== undefined && id !== this.resident.get()?.id ? IMMUTABLE : this.options.currentCacheControl;
  }

  /** Serves the release DATA_DIR's pointer names now (start, SIGHUP, admin); rejects, logged, when it cannot be loaded. */
  reload(reason: string): Promise<SwitchResult> {
    return this.switcher.reload(reason);
  }

  /** Follows DATA_DIR's pointer from now on. */
  start(): void {
    this.switcher.start();
  }

  /** Stops following the pointer and waits for loads and drops under way. */
  close(): Promise<void> {
    return this.switcher.close();
  }

  private async loadAndHold(id: string): Promise<ReleaseHold> {
    const held = this.vintages.hold(id);
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<'late'>((resolve) => (timer = setTimeout(resolve, this.options.loadWaitMs, 'late')));
    try {
      const hold = await Promise.race([held, waited]);
      if (hold !== 'late') return hold;
      // Whoever gets the hold after this request gave up lets it go at once.
      void held.then(
        (late) => late.letGo(),
        () => {},
      );
      throw new ReleaseLoadingError(id);
    } catch (err) {
      throw err instanceof VintageUnavailableError ? new ReleaseUnavailableError(id) : err;
    } finally {
      clearTimeout(timer);
    }
  }
}
