import fs from 'node:fs/promises';
import path from 'node:path';
import * as v from 'valibot';
import { RELEASE_ID } from '../registry.ts';
import { ReleaseError, readManifest } from './manifest.ts';
import { listReleaseDirs, POINTER_FILE, readPointer, syncPath } from './on-disk.ts';

// The publication log: DATA_DIR/publications.jsonl, one JSON line per switch of the
// release served, appended by `etl load` and `etl rollback` once the pointer has moved.
// It is what `as_of=` and `/v1/history` read: which release was served when, and which
// releases a rollback withdrew (docs/api.md "The publication log").

export const LOG_FILE = 'publications.jsonl';

const releaseId = v.pipe(v.string(), v.regex(RELEASE_ID, 'Expected a release id like 2026-11'));

const lineSchema = v.strictObject({
  seq: v.pipe(v.number(), v.integer(), v.minValue(1)),
  type: v.picklist(['release.published', 'release.withdrawn']),
  /** Published: the release now served. Withdrawn: the release no longer served. */
  release: releaseId,
  /** Published: the release it replaced. Withdrawn: the release served again in its place. */
  previous: v.nullable(releaseId),
  at: v.pipe(v.string(), v.isoTimestamp('Expected an ISO timestamp')),
});

export type Publication = v.InferOutput<typeof lineSchema>;
type Switch = Omit<Publication, 'seq' | 'at'>;

/**
 * The log's whole lines. A last line without its newline is an append cut short (a
 * crash or a full disk mid-write): no publication, and the next append overwrites it.
 */
export function parseLog(text: string, file: string): Publication[] {
  const whole = text.slice(0, text.lastIndexOf('\n') + 1);
  return whole
    .split('\n')
    .slice(0, -1)
    .map((line, i) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch (err) {
        throw new ReleaseError(`${file}: line ${i + 1} is not JSON (${(err as Error).message}); restore the file from a backup`);
      }
      const result = v.safeParse(lineSchema, parsed);
      if (!result.success) {
        const issue = result.issues[0];
        throw new ReleaseError(
          `${file}: line ${i + 1}, field "${v.getDotPath(issue) ?? '(root)'}": ${issue.message}; restore the file from a backup`,
        );
      }
      return result.output;
    });
}

/** The release served after the log's last line (null before any). */
export const servedAfter = (log: readonly Publication[]): string | null => servedAt(log, Number.POSITIVE_INFINITY);

/** The release served at `instant` (ms since the epoch), or null when none was published yet. */
export function servedAt(log: readonly Publication[], instant: number): string | null {
  let served: string | null = null;
  for (const line of log) {
    if (Date.parse(line.at) > instant) break;
    served = line.type === 'release.published' ? line.release : line.previous;
  }
  return served;
}

/** Releases a rollback withdrew and that no switch has served since, with when. */
export function withdrawnReleases(log: readonly Publication[]): Map<string, string> {
  const withdrawn = new Map<string, string>();
  for (const line of log) {
    if (line.type === 'release.withdrawn') withdrawn.set(line.release, line.at);
    else withdrawn.delete(line.release);
  }
  return withdrawn;
}

/** When each release was first published. */
export function firstPublished(log: readonly Publication[]): Map<string, string> {
  const first = new Map<string, string>();
  for (const line of log) if (line.type === 'release.published' && !first.has(line.release)) first.set(line.release, line.at);
  return first;
}

/**
 * The lines a switch of the pointer to `to` writes. Going back withdraws, newest first,
 * every release served since `to` that is not withdrawn yet, each line naming the one
 * served in its place; a release not served after that (loaded, or rolled forward to)
 * is published.
 */
export function switchLines(log: readonly Publication[], to: string): Switch[] {
  const withdrawn = withdrawnReleases(log);
  const served = [...firstPublished(log).keys()].filter((id) => !withdrawn.has(id)).sort();
  const lines: Switch[] = [];
  let now = servedAfter(log);
  for (let i = served.length - 1; i >= 0 && served[i]! > to; i--) {
    const back = served[i - 1] ?? null;
    lines.push({ type: 'release.withdrawn', release: served[i]!, previous: back });
    now = back;
  }
  if (now !== to) lines.push({ type: 'release.published', release: to, previous: now });
  return lines;
}

const number = (log: readonly Publication[], lines: readonly Switch[], at: string): Publication[] =>
  lines.map((line, i) => ({ seq: (log.at(-1)?.seq ?? 0) + i + 1, ...line, at }));

/**
 * The history of a DATA_DIR published before the log existed, from what it holds:
 * each release up to the one served, published in id order at its manifest's time;
 * each newer one published and then withdrawn when the pointer last moved (a rollback
 * left it; when exactly, nothing recorded).
 */
async function derivedLog(dataDir: string): Promise<Publication[]> {
  const ids = (await listReleaseDirs(dataDir)).map((dir) => path.basename(dir));
  const current = (await readPointer(dataDir)) ?? ids.at(-1);
  const log: Publication[] = [];
  let latest = 0;
  for (const id of ids) {
    const manifest = await readManifest(path.join(dataDir, id));
    // Kept in order: a release published after another cannot be dated before it.
    latest = Math.max(latest, Date.parse(manifest.published_at ?? manifest.created_at));
    log.push(...number(log, switchLines(log, id), new Date(latest).toISOString()));
  }
  if (current !== undefined && servedAfter(log) !== current) {
    const moved = Math.max(latest, (await pointerTime(dataDir)) ?? latest);
    log.push(...number(log, switchLines(log, current), new Date(moved).toISOString()));
  }
  return log;
}

const pointerTime = (dataDir: string) =>
  fs.stat(path.join(dataDir, POINTER_FILE)).then(
    (s) => s.mtimeMs,
    () => undefined,
  );

/**
 * The publication log as it stands: the file's lines, or (before any etl command wrote
 * one) the history derived from the manifests; and, where the pointer names a release
 * the log does not end on (a command killed between the switch and its line), the
 * switch that happened, dated when the pointer moved. Nothing is written.
 */
export async function readPublicationLog(dataDir: string): Promise<Publication[]> {
  const file = path.join(dataDir, LOG_FILE);
  const text = await fs.readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  const log = text === undefined ? await derivedLog(dataDir) : parseLog(text, file);
  const current = await readPointer(dataDir);
  if (current === undefined || servedAfter(log) === current) return log;
  const moved = Math.max(Date.parse(log.at(-1)?.at ?? '1970-01-01T00:00:00Z'), (await pointerTime(dataDir)) ?? 0);
  return [...log, ...number(log, switchLines(log, current), new Date(moved).toISOString())];
}

/**
 * Makes the file hold the log as it stands before a switch (written whole, beside it,
 * then renamed, the first time; repaired where an append was cut short), so that the
 * switch's own lines follow it. Returns the log.
 */
export async function settleLog(dataDir: string): Promise<Publication[]> {
  const file = path.join(dataDir, LOG_FILE);
  const log = await readPublicationLog(dataDir);
  const text = await fs.readFile(file, 'utf8').catch(() => undefined);
  const whole = log.map((line) => `${JSON.stringify(line)}\n`).join('');
  if (text !== whole) {
    const tmp = path.join(dataDir, `.${LOG_FILE}.tmp-${process.pid}`);
    await fs.writeFile(tmp, whole);
    await syncPath(tmp);
    await fs.rename(tmp, file);
    await syncPath(dataDir);
  }
  return log;
}

/**
 * Records the switch to `to` that has just happened, after `before` (settleLog's
 * answer, read before the pointer moved): its lines in one append, synced. A kill
 * before the append leaves the pointer ahead of the log, which readPublicationLog
 * completes; one during the write leaves a cut line, which it ignores.
 */
export async function recordSwitch(dataDir: string, before: readonly Publication[], to: string, at: Date): Promise<Publication[]> {
  const lines = number(before, switchLines(before, to), at.toISOString());
  if (lines.length === 0) return lines;
  const handle = await fs.open(path.join(dataDir, LOG_FILE), 'a');
  try {
    await handle.write(lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
    await handle.sync();
  } finally {
    await handle.close();
  }
  return lines;
}
