import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { findDataset } from '../../src/registry.ts';
import { readManifest } from '../../src/releases/manifest.ts';
import { readPublicationLog, withdrawnReleases } from '../../src/releases/publication-log.ts';
import type { ServiceProcess } from '../../tools/service-process.ts';
import { historyAlone, historyCeilingSql } from '../ceilings/duckdb-history.ts';
import { type Figure, figure, rounds, type ServerSide, type Timing } from '../runner/measure.ts';
import { cpuSeconds } from '../runner/wrk.ts';
import { seededReleases } from './cancel.ts';
import { capture, withKey } from './suite.ts';

// What /v1/history costs over a whole dataset (docs/performance.md "History"). Three 1x
// releases, each generated from its own seed so that every ggr row differs from the
// release before, are published in order by `etl load`. On a server that keeps no
// history (REVISIONS_KEEP_BYTES=0: each request computes its own), ROUNDS times in turn:
// the whole `output=changes` history of ggr as CSV (computed, then streamed), its first
// JSON page (`limit=1`: computed, one row rendered), and DuckDB alone writing the same
// rows as CSV (bench/ceilings/duckdb-history.ts), checked byte for byte against ours.
// CPU seconds are the least of the rounds: other work on a shared machine adds to them,
// never takes away. The `as_of` figures run on the same server (bench/runner/run.ts).

export const HISTORY_RELEASES = [
  ['2026-01', 1],
  ['2026-02', 2],
  ['2026-03', 3],
] as const;
const ROUNDS = 2;
const HISTORY = '/v1/history?metric=ggr&output=changes';
const WHOLE_CSV = `${HISTORY}&format=csv`;
const FIRST_PAGE = `${HISTORY}&limit=1`;

/**
 * The history server's settings beyond DATA_DIR and STATE_DIR: cache off and nothing
 * kept, so every request does its work; no deadline a busy machine could miss. An export
 * counts as idle from its start, before its first byte, so a whole history computed for
 * longer than EXPORT_IDLE_SECONDS (60 s: seen at a load average of 14) was cut off.
 */
export const HISTORY_SERVER = {
  CACHE_MAX_BYTES: '0',
  AGGREGATE_KEEP_BYTES: '0',
  REVISIONS_KEEP_BYTES: '0',
  QUERY_TIMEOUT_MS: '600000',
  EXPORT_IDLE_SECONDS: '600',
};

/** The three releases in `work`/history, published once (later runs reuse them); their DATA_DIR. */
export const historyReleases = (work: string, progress: (text: string) => void): Promise<string> =>
  seededReleases(path.join(work, 'history'), HISTORY_RELEASES, 'the history scenario', progress);

export interface Timed {
  /** CPU seconds, the least of the rounds: the server's, or this process's while DuckDB alone ran. */
  readonly cpuSeconds: number;
  /** Wall seconds of that round. */
  readonly seconds: number;
}

export interface HistoryFigures {
  /** The history's rows (every ggr row differs from release to release: added, changed, changed). */
  readonly rows: number;
  /** Bytes of the whole CSV, ours and DuckDB's alike. */
  readonly bytes: number;
  /** The whole history as CSV, computed for the request and streamed. */
  readonly wholeCsv: Timed;
  /** Its first JSON page (`limit=1`): the history computed, one row rendered. */
  readonly firstPage: Timed;
  /** DuckDB alone writing the same CSV. */
  readonly duckdb: Timed;
}

/** The published releases' ggr files in publication order, as the publication log has it; a rollback's withdrawn releases are left out, as /v1/history leaves them. */
export async function publishedFiles(dataDir: string): Promise<{ id: string; file: string }[]> {
  const log = await readPublicationLog(dataDir);
  const withdrawn = withdrawnReleases(log);
  const ids = log.filter((p) => p.type === 'release.published' && !withdrawn.has(p.release)).map((p) => p.release);
  return Promise.all(
    ids.map(async (id) => ({ id, file: path.join(dataDir, id, (await readManifest(path.join(dataDir, id))).datasets.ggr!.file) })),
  );
}

/** Streams one answer to its end: its bytes and their SHA-256; throws on anything but a 200. */
async function drain(server: ServiceProcess, pathAndQuery: string): Promise<{ bytes: number; sha256: string }> {
  const res = await request(`${server.url}${pathAndQuery}`, { headers: server.headers, headersTimeout: 600_000, bodyTimeout: 600_000 });
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of res.body) {
    bytes += (chunk as Buffer).length;
    hash.update(chunk as Buffer);
  }
  if (res.statusCode !== 200) throw new Error(`${pathAndQuery}: ${res.statusCode}`);
  return { bytes, sha256: hash.digest('hex') };
}

const least = (a: Timed | undefined, b: Timed): Timed => (a && a.cpuSeconds <= b.cpuSeconds ? a : b);

/** The figures on `server` (serving `dataDir`, keeping no history), DuckDB alone in this process beside it. */
export async function historyFigures(
  server: ServiceProcess,
  dataDir: string,
  work: string,
  progress: (text: string) => void,
): Promise<HistoryFigures> {
  const sql = historyCeilingSql(await publishedFiles(dataDir), findDataset('ggr', 'financial')!);
  const cpu = () => cpuSeconds(fs.readFileSync(`/proc/${server.pid}/stat`, 'utf8'));
  const timedOnServer = async <T>(work: () => Promise<T>): Promise<[T, Timed]> => {
    const [before, started] = [cpu(), performance.now()];
    const answer = await work();
    return [answer, { cpuSeconds: cpu() - before, seconds: (performance.now() - started) / 1000 }];
  };
  let figures: HistoryFigures | undefined;
  for (let round = 0; round < ROUNDS; round++) {
    progress(`history: the whole ggr history as CSV, round ${round + 1} of ${ROUNDS}`);
    const [csv, wholeCsv] = await timedOnServer(() => drain(server, WHOLE_CSV));
    progress(`history: its first JSON page, round ${round + 1} of ${ROUNDS}`);
    const [, firstPage] = await timedOnServer(() => drain(server, FIRST_PAGE));
    progress(`history: DuckDB alone on the same rows, round ${round + 1} of ${ROUNDS}`);
    const duckdb = await historyAlone(sql, work);
    if (duckdb.sha256 !== csv.sha256 || duckdb.bytes !== csv.bytes)
      throw new Error(
        `DuckDB alone does not write our history (${duckdb.bytes} bytes, ours ${csv.bytes}; SQL in bench/ceilings/duckdb-history.ts); fix it before timing`,
      );
    figures = {
      rows: duckdb.rows,
      bytes: csv.bytes,
      wholeCsv: least(figures?.wholeCsv, wholeCsv),
      firstPage: least(figures?.firstPage, firstPage),
      duckdb: least(figures?.duckdb, duckdb),
    };
  }
  return figures!;
}

/**
 * The same uncached requests naming a release two ways, `release=2026-02` and `as_of=`
 * the instant halfway between its publication and the next (from the publication log),
 * each answer checked to hold the same data, then both timed alternately in the same
 * rounds at 1 and 16 connections: `as_of=`'s figure with `release=`'s as its ceiling.
 */
export async function asOfFigures(
  server: ServiceProcess,
  dataDir: string,
  timing: Timing,
  progress: (text: string) => void,
): Promise<Figure[]> {
  const log = (await readPublicationLog(dataDir)).filter((p) => p.type === 'release.published');
  const at = log.findIndex((p) => p.release === HISTORY_RELEASES[1][0]);
  const instant = new Date((Date.parse(log[at]!.at) + Date.parse(log[at + 1]!.at)) / 2).toISOString();
  const side = (p: string): ServerSide => ({
    url: server.url,
    requests: withKey([{ path: p, headers: {}, status: 200 }], server.headers),
    pid: server.pid,
  });
  // A release not served answers 503 while it loads for its first request: asked until it is loaded (a 1x release: seconds).
  for (let tries = 0; ; tries++) {
    const res = await request(`${server.url}/v1/financials?metric=ggr&limit=1&release=${log[at]!.release}`, { headers: server.headers });
    await res.body.dump();
    if (res.statusCode !== 503 || tries === 300) break;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  const figures: Figure[] = [];
  for (const { id, title, query } of AS_OF_PAIRS) {
    const [byRelease, byAsOf] = [`${query}&release=${log[at]!.release}`, `${query}&as_of=${encodeURIComponent(instant)}`];
    const data = async (p: string) => JSON.stringify(JSON.parse((await capture(server.url, p, server.headers, 200)).body.toString()).data);
    if ((await data(byAsOf)) !== (await data(byRelease))) throw new Error(`${byAsOf} does not answer as ${byRelease} does`);
    for (const connections of [1, 16] as const) {
      const [t] = await rounds([{ ceilings: { release: side(byRelease) }, service: side(byAsOf) }], connections, timing, (text) =>
        progress(`${title}, ${connections} conn: ${text}`),
      );
      figures.push(figure(id, title, connections, t!.service, t!.halves, t!.ceilings, t!.ceilingHalves));
    }
  }
  return figures;
}

const AS_OF_PAIRS = [
  { id: 'as-of-page', title: 'uncached page, as_of= vs release=', query: '/v1/financials?metric=ggr&limit=1000' },
  { id: 'as-of-aggregate', title: 'uncached aggregate, as_of= vs release=', query: '/v1/aggregate?metric=ggr&group_by=region,year&fx=USD' },
] as const;

/** History server CPU over DuckDB alone's, for the whole CSV: what docs/performance.md's target bounds at 2. */
export const historyVsDuckdb = (f: HistoryFigures) => f.wholeCsv.cpuSeconds / f.duckdb.cpuSeconds;

export const HISTORY_HEADER = `${'ggr history, output=changes, 3 releases'.padEnd(44)} ${'rows'.padStart(10)} ${'MB'.padStart(7)}   ${'CPU s'.padStart(6)}   ${'wall s'.padStart(6)}   vs DuckDB alone`;

export function historyRows(f: HistoryFigures): string[] {
  const row = (name: string, t: Timed) =>
    `${name.padEnd(44)} ${f.rows.toLocaleString('en').padStart(10)} ${(f.bytes / 1e6).toFixed(1).padStart(7)}   ${t.cpuSeconds.toFixed(2).padStart(6)}   ${t.seconds.toFixed(1).padStart(6)}   ${(t.cpuSeconds / f.duckdb.cpuSeconds).toFixed(2)}×`;
  return [
    row('whole CSV (computed, streamed)', f.wholeCsv),
    row('first JSON page (computed)', f.firstPage),
    row('DuckDB alone, same CSV', f.duckdb),
  ];
}
