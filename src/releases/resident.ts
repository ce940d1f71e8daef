import type { Clock } from '../limits/limiter.ts';
import type { LoadedRelease } from './load-release.ts';

/** A request's (or a walk's) claim on a release: its tables are not dropped until let go. */
export interface ReleaseHold {
  readonly release: LoadedRelease;
  /** Ends the claim; later calls do nothing. */
  letGo(): void;
}

/**
 * The releases loaded in DuckDB: the current one, which requests without
 * `release=` read, and up to `capacity - 1` others (the one a switch replaced,
 * vintages loaded on demand). A request holds the release it reads for as long as
 * it reads it, so a swap never mixes two releases in one response and a release is
 * unloaded only once nobody holds it.
 *
 * This class decides what stays; the caller loads and drops tables (one at a time,
 * src/releases/load-queue.ts) and calls `evict` to learn what may go.
 */
export class ResidentReleases {
  private current: LoadedRelease | undefined;
  /** Loaded releases besides the current one, with when a request last held one. */
  private readonly others = new Map<string, { release: LoadedRelease; usedAt: number }>();
  private readonly holds = new Map<LoadedRelease, number>();
  private readonly changeListeners: Array<(release: LoadedRelease) => void> = [];
  private readonly overListeners: Array<() => void> = [];

  constructor(
    private readonly clock: Clock = Date.now,
    private readonly options: {
      /** A release other than the current one that nobody has read for this long is evicted. */
      idleMs: number;
      /** Most releases loaded at once, the current one included (RELEASES_IN_MEMORY). */
      capacity: number;
    } = { idleMs: 3_600_000, capacity: 3 },
  ) {}

  /** The current release; undefined while the first one is still loading. */
  get(): LoadedRelease | undefined {
    return this.current;
  }

  /** Release `id` if it is loaded. */
  find(id: string): LoadedRelease | undefined {
    return this.current?.id === id ? this.current : this.others.get(id)?.release;
  }

  /**
   * Holds the current release (`id` undefined) or loaded release `id` for as long as
   * a request reads its tables; undefined when it is not loaded.
   */
  hold(id?: string): ReleaseHold | undefined {
    const release = id === undefined ? this.current : this.find(id);
    if (!release) return undefined;
    this.holds.set(release, (this.holds.get(release) ?? 0) + 1);
    let held = true;
    return {
      release,
      letGo: () => {
        if (!held) return;
        held = false;
        const left = this.holds.get(release)! - 1;
        if (left > 0) this.holds.set(release, left);
        else this.holds.delete(release);
        const other = this.others.get(release.id);
        if (other?.release === release) other.usedAt = this.clock();
        // An eviction that waited for this hold can happen now.
        if (left === 0 && this.size > this.options.capacity) for (const listener of this.overListeners) listener();
      },
    };
  }

  /** Makes `release` current; the one it replaces stays loaded as any other, until evicted. */
  set(release: LoadedRelease): void {
    const previous = this.current;
    this.current = release;
    this.others.delete(release.id);
    if (previous === release) return;
    if (previous) this.others.set(previous.id, { release: previous, usedAt: this.clock() });
    for (const listener of this.changeListeners) listener(release);
  }

  /** Adds a release loaded on demand (not current). */
  add(release: LoadedRelease): void {
    this.others.set(release.id, { release, usedAt: this.clock() });
  }

  /** Ids of the loaded releases besides the current one, most recently used first. */
  otherIds(): string[] {
    return [...this.others.values()].sort((a, b) => b.usedAt - a.usedAt).map(({ release }) => release.id);
  }

  get size(): number {
    return (this.current ? 1 : 0) + this.others.size;
  }

  /**
   * Forgets and returns the releases whose tables can be dropped now: those no longer
   * `kept` on disk, those idle for `idleMs`, then the least recently used
   * until `room` more fit under the capacity. The current release and held ones stay;
   * a held one over the capacity is announced to `onOverCapacity` when let go.
   */
  evict(kept: (id: string) => boolean, room = 0): LoadedRelease[] {
    const now = this.clock();
    const free = [...this.others.values()].filter(({ release }) => !this.holds.has(release)).sort((a, b) => a.usedAt - b.usedAt);
    const evicted: LoadedRelease[] = [];
    let size = this.size;
    for (const { release, usedAt } of free) {
      if (!kept(release.id) || now - usedAt >= this.options.idleMs || size + room > this.options.capacity) {
        this.others.delete(release.id);
        evicted.push(release);
        size--;
      }
    }
    return evicted;
  }

  /** Calls `listener` with each release that becomes current. */
  onChange(listener: (release: LoadedRelease) => void): void {
    this.changeListeners.push(listener);
  }

  /** Calls `listener` when a hold ends while more releases are loaded than the capacity. */
  onOverCapacity(listener: () => void): void {
    this.overListeners.push(listener);
  }
}
