import type { Clock } from '../limits/limiter.ts';
import type { LoadedRelease } from './loader.ts';

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

  /** Forgets the replaced releases whose grace period is over and returns them, so their tables can be dropped. */
  expire(): LoadedRelease[] {
    const expired = [...this.retained.values()].filter((kept) => this.clock() >= kept.until);
    for (const kept of expired) this.retained.delete(kept.release.id);
    if (expired.length > 0) for (const listener of this.expiryListeners) listener();
    return expired.map((kept) => kept.release);
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
