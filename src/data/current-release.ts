import { NotReadyError } from '../errors.ts';
import type { LoadedRelease } from './loader.ts';

/**
 * The release being served. A request reads it once and uses that object
 * throughout, so a swap to a new release never mixes two releases in one response.
 */
export class CurrentRelease {
  private loaded: LoadedRelease | undefined;

  get ready(): boolean {
    return this.loaded !== undefined;
  }

  /** The served release; a 503 while the first one is still loading. */
  get(): LoadedRelease {
    if (!this.loaded) throw new NotReadyError();
    return this.loaded;
  }

  set(release: LoadedRelease): void {
    this.loaded = release;
  }
}
