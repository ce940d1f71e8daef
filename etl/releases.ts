import fs from 'node:fs/promises';
import path from 'node:path';
import { type Manifest, ReleaseError, readManifest } from '../src/releases/manifest.ts';
import { currentRelease, listReleaseDirs, readPointer, syncPath, verifyRelease, writePointer } from '../src/releases/on-disk.ts';
import { recordSwitch, settleLog } from '../src/releases/publication-log.ts';

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
  return [header, ...rows]
    .map((r) =>
      r
        .map((c, i) => (i === 3 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/**
 * Points DATA_DIR back at `release`, by default the release published before the
 * current one, after checking its files against its manifest. Returns [from, to].
 */
export async function rollback(dataDir: string, release?: string, now = () => new Date()): Promise<[string | undefined, string]> {
  const from = (await readPointer(dataDir)) ?? (await currentRelease(dataDir))?.manifest.release;
  const ids = (await listReleaseDirs(dataDir)).map((dir) => path.basename(dir));
  const to = release ?? ids.filter((id) => from === undefined || id < from).at(-1);
  if (to === undefined)
    throw new ReleaseError(`${dataDir}: no release before ${from ?? '(none)'} to roll back to; \`npm run etl -- list\` shows the releases`);
  if (!ids.includes(to)) throw new ReleaseError(`${path.join(dataDir, to)}: no such release; \`npm run etl -- list\` shows the releases`);
  const dir = path.join(dataDir, to);
  await verifyRelease({ dir, manifest: await readManifest(dir) });
  const before = await settleLog(dataDir);
  await writePointer(dataDir, to);
  await recordSwitch(dataDir, before, to, now());
  return [from, to];
}

/**
 * `.2026-11.tmp-4242` (a release being written), `.CURRENT.tmp-4242` (a pointer) or
 * `.2026-07.prune-4242` (a release being removed), by the PID doing it.
 */
const WORK_ENTRY = /^\.[^/]+\.(?:tmp|prune)-(\d+)$/;

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

export interface PruneResult {
  readonly removed: string[];
  readonly kept: string[];
  readonly current: string | undefined;
  /** Newer than the current release (withdrawn by a rollback): kept so a rollback can return to them. */
  readonly withdrawn: string[];
}

/**
 * Removes all but the `keep` newest releases up to the current one (which counts as
 * one of them). The current release and any newer one (withdrawn by a rollback, kept
 * so `etl rollback` can return to it) always stay. Each folder is renamed out of the
 * release namespace first and DATA_DIR synced, so a crash leaves either the release
 * or a `.ID.prune-PID` folder the next etl command removes, never half a release.
 */
export async function pruneReleases(dataDir: string, keep: number, options: { dryRun: boolean }): Promise<PruneResult> {
  if (!Number.isInteger(keep) || keep < 1)
    throw new ReleaseError(`--keep must be a whole number of at least 1 (the current release counts as one); got ${keep}`);
  const current = (await currentRelease(dataDir))?.manifest.release;
  const ids = (await listReleaseDirs(dataDir)).map((dir) => path.basename(dir));
  const withdrawn = ids.filter((id) => current !== undefined && id > current);
  const candidates = ids.filter((id) => !withdrawn.includes(id)).reverse();
  const kept = candidates.slice(0, keep).reverse();
  const removed = candidates.slice(keep).reverse();
  if (!options.dryRun) {
    for (const id of removed) {
      const doomed = path.join(dataDir, `.${id}.prune-${process.pid}`);
      await fs.rename(path.join(dataDir, id), doomed);
      await syncPath(dataDir);
      await fs.rm(doomed, { recursive: true, force: true });
    }
  }
  return { removed, kept, current, withdrawn };
}

/**
 * One line per release removed (`would remove` with --dry-run), then what stays: the
 * `keep` newest up to the current one, and on a line of its own any newer release.
 */
export function formatPrune({ removed, kept, current, withdrawn }: PruneResult, keep: number, dryRun: boolean): string {
  const lines = removed.map((id) => `${dryRun ? 'would remove' : 'removed'} ${id}`);
  const name = (id: string) => (id === current ? `${id} (current)` : id);
  if (removed.length === 0) lines.push(`nothing to prune: ${kept.length} release${kept.length === 1 ? '' : 's'}, keeping ${keep}`);
  else lines.push(`kept ${kept.map(name).join(', ')}`);
  if (withdrawn.length) {
    const them = withdrawn.length === 1 ? 'it' : 'them';
    lines.push(
      `kept ${withdrawn.join(', ')}: newer than the current release (withdrawn by a rollback), so \`etl rollback\` can return to ${them}`,
    );
  }
  return lines.join('\n');
}
