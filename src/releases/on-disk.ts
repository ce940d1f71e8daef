import fs from 'node:fs/promises';
import path from 'node:path';
import { DATASETS, RELEASE_ID } from '../registry.ts';
import { type Manifest, ReleaseError, readManifest, sha256File } from './manifest.ts';

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
    if (
      await fs.stat(path.join(dir, 'manifest.json')).then(
        () => true,
        () => false,
      )
    )
      dirs.push(dir);
  }
  return dirs.sort();
}

/** The file in DATA_DIR naming the release to serve; `etl load` and `etl rollback` replace it atomically. */
export const POINTER_FILE = 'CURRENT';

/** The release the pointer names, or undefined when there is no pointer. */
export async function readPointer(dataDir: string): Promise<string | undefined> {
  const text = await fs.readFile(path.join(dataDir, POINTER_FILE), 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (text === undefined) return undefined;
  const id = text.trim();
  if (!RELEASE_ID.test(id))
    throw new ReleaseError(
      `${path.join(dataDir, POINTER_FILE)}: holds ${JSON.stringify(id)}, not a release id like 2026-11; run \`npm run etl -- rollback RELEASE\` to point it at a release`,
    );
  return id;
}

/**
 * Points DATA_DIR at `id`: written beside the pointer and renamed over it, so a reader
 * sees the old or the new id, never half of one. Synced before the rename and the
 * folder after it, so after a power loss the pointer names a whole release (which
 * `etl load` synced before calling this) or still the previous one.
 */
export async function writePointer(dataDir: string, id: string): Promise<void> {
  const tmp = path.join(dataDir, `.${POINTER_FILE}.tmp-${process.pid}`);
  await fs.writeFile(tmp, `${id}\n`);
  await syncPath(tmp);
  await fs.rename(tmp, path.join(dataDir, POINTER_FILE));
  await syncPath(dataDir);
}

/** Flushes a file's data, or a folder's entries, to the disk. */
export async function syncPath(file: string): Promise<void> {
  const handle = await fs.open(file, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The release to serve: the one the pointer names, else (before any `etl load`) the newest. */
export async function currentRelease(dataDir: string): Promise<ReleaseOnDisk | undefined> {
  const id = await readPointer(dataDir);
  if (id === undefined) return latestRelease(dataDir);
  const dir = path.join(dataDir, id);
  return { dir, manifest: await readManifest(dir) };
}

/** The newest release, or undefined when DATA_DIR holds none. */
export async function latestRelease(dataDir: string): Promise<ReleaseOnDisk | undefined> {
  const dir = (await listReleaseDirs(dataDir)).at(-1);
  return dir ? { dir, manifest: await readManifest(dir) } : undefined;
}

/**
 * Checks that every registered dataset is present and its file matches the manifest's
 * checksum; `signal` stops the reading between chunks (a load nobody waits for).
 */
export async function verifyRelease({ dir, manifest }: ReleaseOnDisk, signal?: AbortSignal): Promise<void> {
  for (const def of DATASETS) {
    const entry = manifest.datasets[def.name];
    if (!entry)
      throw new ReleaseError(
        `${path.join(dir, 'manifest.json')}: field "datasets.${def.name}" is missing; every release needs all of ${DATASETS.map((d) => d.name).join(', ')}, so add the file with its entry or regenerate the release`,
      );
    const file = path.join(dir, entry.file);
    const actual = await sha256File(file, signal).catch((err: Error) => {
      if (signal?.aborted) throw signal.reason;
      throw new ReleaseError(`${file}: cannot read (${err.message}); restore the file or regenerate the release`);
    });
    if (actual !== entry.sha256) {
      throw new ReleaseError(
        `${file}: SHA-256 is ${actual} but manifest field "datasets.${def.name}.sha256" says ${entry.sha256}; the file changed after publishing, so restore it or regenerate the release`,
      );
    }
  }
}
