import fs from 'node:fs/promises';
import path from 'node:path';
import { DATASETS } from '../registry.ts';
import { RELEASE_ID, ReleaseError, readManifest, sha256File, type Manifest } from './manifest.ts';

export interface ReleaseOnDisk {
  readonly dir: string;
  readonly manifest: Manifest;
}

/** Release folders under DATA_DIR that have a manifest, oldest first. */
export async function listReleaseDirs(dataDir: string): Promise<string[]> {
  const entries = await fs.readdir(dataDir, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
  const dirs: string[] = [];
  for (const entry of entries) {
    if (!entry.isDirectory() || !RELEASE_ID.test(entry.name)) continue;
    const dir = path.join(dataDir, entry.name);
    if (await fs.stat(path.join(dir, 'manifest.json')).then(() => true, () => false)) dirs.push(dir);
  }
  return dirs.sort();
}

/** The newest release, or undefined when DATA_DIR holds none. */
export async function latestRelease(dataDir: string): Promise<ReleaseOnDisk | undefined> {
  const dir = (await listReleaseDirs(dataDir)).at(-1);
  return dir ? { dir, manifest: await readManifest(dir) } : undefined;
}

/** Checks that every registered dataset is present and its file matches the manifest's checksum. */
export async function verifyRelease({ dir, manifest }: ReleaseOnDisk): Promise<void> {
  for (const def of DATASETS) {
    const entry = manifest.datasets[def.name];
    if (!entry) throw new ReleaseError(`${path.join(dir, 'manifest.json')}: field "datasets.${def.name}" is missing; every release needs all of ${DATASETS.map((d) => d.name).join(', ')}, so add the file with its entry or regenerate the release`);
    const file = path.join(dir, entry.file);
    const actual = await sha256File(file).catch((err: Error) => {
      throw new ReleaseError(`${file}: cannot read (${err.message}); restore the file or regenerate the release`);
    });
    if (actual !== entry.sha256) {
      throw new ReleaseError(`${file}: SHA-256 is ${actual} but manifest field "datasets.${def.name}.sha256" says ${entry.sha256}; the file changed after publishing, so restore it or regenerate the release`);
    }
  }
}
