import type { Clock } from '../limits/limiter.ts';
import type { LoadedRelease } from './loader.ts';

/** A request's (or a walk's) claim on a release: its tables are not dropped until let go. */
export interface ReleaseHold {
  readonly release: LoadedRelease;
  /** Ends the claim; later calls do nothing. */
  letGo(): void;
}

/**
 * The release being served, and the ones it replaced that are kept for their grace
 * period so cursors issued before a switch keep paging through the release they
 * started on. A request reads a release once and uses that object throughout, so a
 * swap never mixes two releases in one response.
 */
export class CurrentRelease {
  private loaded: LoadedRelease | undefined;
  private readonly retained = new Map<string, { release: LoadedRelease; until: number }>();
  private readonly listeners: Array<(release: LoadedRelease) => void> = [];
  /** Holds per release; a release absent here is held by nobody. */
  private readonly holds = new Map<LoadedRelease, number>();
  /** Releases past their grace period that were still held: dropped when the last hold ends. */
  private readonly draining = new Set<LoadedRelease>();
  private readonly drainListeners: Array<(release: LoadedRelease) => void> = [];

  constructor(
    private readonly clock: Clock = Date.now,
    private readonly graceMs = 3_600_000,
  ) {}

  /** The served release; undefined while the first one is still loading. */
  get(): LoadedRelease | undefined {
    return this.loaded;
  }

  /** The served release if it is `id`, else a replaced release `id` still in its grace period. */
  find(id: string): LoadedRelease | undefined {
    if (this.loaded?.id === id) return this.loaded;
    const kept = this.retained.get(id);
    return kept && this.clock() < kept.until ? kept.release : undefined;
  }

  /**
   * Holds the served release (`id` undefined) or a retained release `id`, for as long
   * as a request reads its tables; undefined when there is no such release. A release
   * whose grace period ends while held stays loaded until its last hold is let go.
   */
  hold(id?: string): ReleaseHold | undefined {
    const release = id === undefined ? this.loaded : this.find(id);
    if (!release) return undefined;
    this.holds.set(release, (this.holds.get(release) ?? 0) + 1);
    let held = true;
    return {
      release,
      letGo: () => {
        if (!held) return;
        held = false;
        const left = this.holds.get(release)! - 1;
        if (left > 0) return void this.holds.set(release, left);
        this.holds.delete(release);
        if (this.draining.delete(release)) for (const listener of this.drainListeners) listener(release);
      },
    };
  }

  /** Takes back a release past its grace period that is still held, to serve it again instead of loading its id anew over its tables. */
  revive(id: string): LoadedRelease | undefined {
    const release = [...this.draining].find((r) => r.id === id);
    if (release) this.draining.delete(release);
    return release;
  }

  set(release: LoadedRelease): void {
    const previous = this.loaded;
    this.loaded = release;
    if (previous?.id === release.id) return;
    this.retained.delete(release.id);
    if (previous) this.retained.set(previous.id, { release: previous, until: this.clock() + this.graceMs });
    for (const listener of this.listeners) listener(release);
  }

  /** Ids of replaced releases still in their grace period. */
  retainedIds(): string[] {
    return [...this.retained].filter(([, kept]) => this.clock() < kept.until).map(([id]) => id);
  }

  /**
   * Forgets the replaced releases whose grace period is over and returns those nobody
   * holds, so their tables can be dropped; a held one is announced to `onDrained`
   * listeners when its last hold ends.
   */
  expire(): LoadedRelease[] {
    const expired = [...this.retained.values()].filter((kept) => this.clock() >= kept.until).map((kept) => kept.release);
    for (const release of expired) this.retained.delete(release.id);
    if (expired.length > 0) for (const listener of this.expiryListeners) listener();
    const held = expired.filter((release) => this.holds.has(release));
    for (const release of held) this.draining.add(release);
    return expired.filter((release) => !held.includes(release));
  }

  /** Calls `listener` with each expired release once nobody holds it any more: its tables can go now. */
  onDrained(listener: (release: LoadedRelease) => void): void {
    this.drainListeners.push(listener);
  }

  /** Calls `listener` with each release that replaces another (or the first one). */
  onChange(listener: (release: LoadedRelease) => void): void {
    this.listeners.push(listener);
  }

  private readonly expiryListeners: Array<() => void> = [];

  /** Calls `listener` when replaced releases are forgotten: what was kept for them can go too. */
  onExpire(listener: () => void): void {
    this.expiryListeners.push(listener);
  }
}
