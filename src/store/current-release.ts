import type { LoadedRelease } from './loader.ts';

/**
 * The release being served. A request reads it once and uses that object
 * throughout, so a swap to a new release never mixes two releases in one response.
 */
export class CurrentRelease {
  private loaded: LoadedRelease | undefined;
  private readonly listeners: Array<(release: LoadedRelease) => void> = [];

  /** The served release; undefined while the first one is still loading. */
  get(): LoadedRelease | undefined {
    return this.loaded;
  }

  set(release: LoadedRelease): void {
    const changed = this.loaded?.id !== release.id;
    this.loaded = release;
    if (changed) for (const listener of this.listeners) listener(release);
  }

  /** Calls `listener` with each release that replaces another (or the first one). */
  onChange(listener: (release: LoadedRelease) => void): void {
    this.listeners.push(listener);
  }
}
