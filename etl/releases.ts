import fs from 'node:fs/promises';
import path from 'node:path';
import { readManifest, ReleaseError, type Manifest } from '../src/releases/manifest.ts';
import { currentRelease, listReleaseDirs, readPointer, verifyRelease, writePointer } from '../src/releases/on-disk.ts';

// `etl list` and `etl rollback`: the releases of DATA_DIR and which one the pointer names.

export interface ReleaseSummary {
  readonly manifest: Manifest;
  readonly rows: number;
  readonly current: boolean;
}

export async function listReleases(dataDir: string): Promise<ReleaseSummary[]> {
  const current = (await currentRelease(dataDir))?.manifest.release;
  const releases: ReleaseSummary[] = [];
  for (const dir of await listReleaseDirs(dataDir)) {
    const manifest = await readManifest(dir);
    const rows = Object.values(manifest.datasets).reduce((sum, d) => sum + d.rows, 0);
    releases.push({ manifest, rows, current: manifest.release === current });
  }
  return releases;
}

export function formatList(releases: readonly ReleaseSummary[]): string {
  const rows = releases.map((r) => [
    r.current ? '*' : ' ',
    r.manifest.release,
    r.manifest.published_at ?? r.manifest.created_at,
    r.rows.toLocaleString('en-US'),
    r.manifest.synthetic ? 'synthetic' : '',
  ]);
  const header = [' ', 'release', 'published', 'rows', ''];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [header, ...rows].map((r) => r.map((c, i) => (i === 3 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd()).join('\n');
}

/**
 * Points DATA_DIR back at `release`, by default the release published before the
 * current one, after checking its files against its manifest. Returns [from, to].
 */
export async function rollback(dataDir: string, release?: string): Promise<[string | undefined, string]> {
  const from = (await readPointer(dataDir)) ?? (await currentRelease(dataDir))?.manifest.release;
  const ids = (await listReleaseDirs(dataDir)).map((dir) => path.basename(dir));
  const to = release ?? ids.filter((id) => from === undefined || id < from).at(-1);
  if (to === undefined) throw new ReleaseError(`${dataDir}: no release before ${from ?? '(none)'} to roll back to; \`npm run etl -- list\` shows the releases`);
  if (!ids.includes(to)) throw new ReleaseError(`${path.join(dataDir, to)}: no such release; \`npm run etl -- list\` shows the releases`);
  const dir = path.join(dataDir, to);
  await verifyRelease({ dir, manifest: await readManifest(dir) });
  await writePointer(dataDir, to);
  return [from, to];
}

/** `.2026-11.tmp-4242` (a release being written) or `.CURRENT.tmp-4242` (a pointer), by the PID writing it. */
const WORK_ENTRY = /^\.[^/]+\.tmp-(\d+)$/;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: alive, but another user's.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Removes what killed `etl` commands left in DATA_DIR: release folders and pointer
 * files still being written by a process that no longer runs. A live load's are
 * left alone. Returns the names removed.
 */
export async function removeAbandoned(dataDir: string): Promise<string[]> {
  const entries = await fs.readdir(dataDir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
  const abandoned = entries.filter((entry) => {
    const pid = WORK_ENTRY.exec(entry)?.[1];
    return pid !== undefined && Number(pid) !== process.pid && !alive(Number(pid));
  });
  for (const entry of abandoned) await fs.rm(path.join(dataDir, entry), { recursive: true, force: true });
  return abandoned;
}
