import path from 'node:path';
import { type Manifest, readManifest } from './manifest.ts';
import { listReleaseDirs } from './on-disk.ts';

/**
 * The releases a client may ask for by `release=`: every release folder in DATA_DIR
 * up to the current one. A release newer than the current one was withdrawn by
 * `etl rollback` and is not served; one removed by `etl prune` is gone.
 *
 * Read again at every poll of the release switcher, never per request; a manifest
 * is read once (a published release's files never change).
 */
export class PublishedReleases {
  private manifests = new Map<string, { dir: string; manifest: Manifest }>();
  /** Newest first. */
  private ids: string[] = [];
  /** Every release folder, the withdrawn ones newer than the current one included. */
  private onDisk = new Set<string>();
  private readonly listeners: Array<() => void> = [];

  constructor(private readonly dataDir: string) {}

  /** Lists DATA_DIR again, with `current` the release being served; tells listeners when the set changed. */
  async refresh(current: string): Promise<void> {
    const read = new Map<string, { dir: string; manifest: Manifest }>();
    const dirs = await listReleaseDirs(this.dataDir);
    this.onDisk = new Set(dirs.map((dir) => path.basename(dir)));
    for (const dir of dirs) {
      const id = path.basename(dir);
      if (id > current) continue;
      // A folder whose manifest cannot be read is no release (etl list and the switcher say why).
      const manifest = this.manifests.get(id)?.manifest ?? (await readManifest(dir).catch(() => undefined));
      if (manifest) read.set(id, { dir, manifest });
    }
    const ids = [...read.keys()].sort().reverse();
    const changed = ids.join() !== this.ids.join();
    this.manifests = read;
    this.ids = ids;
    if (changed) for (const listener of this.listeners) listener();
  }

  has(id: string): boolean {
    return this.manifests.has(id);
  }

  /** Whether release `id`'s folder is still in DATA_DIR, published or withdrawn by a rollback. */
  kept(id: string): boolean {
    return this.onDisk.has(id);
  }

  /** The folder and manifest of published release `id`. */
  get(id: string): { dir: string; manifest: Manifest } | undefined {
    return this.manifests.get(id);
  }

  /** Published release ids, newest first. */
  list(): readonly string[] {
    return this.ids;
  }

  /** The release published before `id`, if any. */
  previous(id: string): string | undefined {
    const at = this.ids.indexOf(id);
    return at < 0 ? undefined : this.ids[at + 1];
  }

  /** Calls `listener` when a release is published, withdrawn or removed. */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }
}
