import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { request } from 'undici';
import { Database } from '../../src/duckdb/database.ts';
import { quoteIdent, quoteLiteral } from '../../src/duckdb/sql-text.ts';
import { DATASETS, INTEGER_DIMENSIONS } from '../../src/registry.ts';
import type { ReleaseOnDisk } from '../../src/releases/on-disk.ts';
import { freePort } from '../../tools/free-port.ts';
import type { Request } from '../runner/load.ts';

// The peer: Debian's clickhouse-server (18.16; `apt-get install -y clickhouse-server`)
// answering the bench page through its HTTP interface from the same rows. The bench
// starts its own server on a free loopback port with a config in a temp dir (never
// the system service) and ends it by PID. 18.16 reads no Parquet, so DuckDB reads
// the release's ggr.parquet, numbers the rows in serving order (`rid`, as the
// service's loader does) and writes CSV that ClickHouse loads into a MergeTree
// ordered by `rid`. The page is asked with literal SQL (18.16 has no query
// parameters) and checked to return our rows, rid for rid, before it is timed.

const DIRS = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/sbin', '/usr/bin'];
export const CLICKHOUSE_BINARY = DIRS.map((dir) => path.join(dir, 'clickhouse-server')).find((file) => fs.existsSync(file));
export const CLICKHOUSE_SKIP_REASON =
  'clickhouse-server is not installed (Debian: apt-get install -y clickhouse-server); the peer comparison is skipped';

const ggr = DATASETS.find((d) => d.name === 'ggr')!;

export interface ClickHouse extends ClickHousePeer {
  /** The page's request, expecting the answer captured and checked against ours. */
  readonly requests: Request[];
}

/** Our page, for the check: its rids (in process) and its rows (the service's JSON `data`). */
export interface OurPage {
  readonly rids: readonly number[];
  readonly data: ReadonlyArray<{ dimensions: Record<string, unknown>; values: Record<string, number> }>;
  readonly filters: ReadonlyMap<string, readonly string[]>;
}

const config = (dir: string, port: number) => `<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><console>1</console></logger>
  <http_port>${port}</http_port>
  <listen_host>127.0.0.1</listen_host>
  <path>${dir}/data/</path>
  <tmp_path>${dir}/tmp/</tmp_path>
  <mark_cache_size>536870912</mark_cache_size>
  <users_config>users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
</yandex>
`;
const USERS = `<?xml version="1.0"?>
<yandex>
  <profiles><default></default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <quotas><default></default></quotas>
</yandex>
`;

/** The peer with the release's ggr loaded and our bench page checked against it: the page's request, captured. */
export async function startClickHouse(release: ReleaseOnDisk, page: OurPage, progress: (text: string) => void): Promise<ClickHouse> {
  const peer = await startClickHouseWithGgr(release, progress);
  try {
    const path_ = `/?query=${encodeURIComponent(pageSql(page.filters))}`;
    const body = await peer.get(path_);
    checkSameRows(body, page);
    return { ...peer, requests: [{ path: path_, headers: {}, status: 200, body }] };
  } catch (err) {
    await peer.stop();
    throw err;
  }
}

export interface ClickHousePeer {
  readonly url: string;
  readonly version: string;
  readonly loadSeconds: number;
  /** A GET of `path` (a `/?query=…`), its 200 body; throws on any other status. */
  get(path: string): Promise<Buffer>;
  stop(): Promise<void>;
}

/** clickhouse-server on a free loopback port, holding the release's ggr rows in `ggr`. */
export async function startClickHouseWithGgr(release: ReleaseOnDisk, progress: (text: string) => void): Promise<ClickHousePeer> {
  if (!CLICKHOUSE_BINARY) throw new Error(CLICKHOUSE_SKIP_REASON);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dqs-bench-clickhouse-'));
  const port = await freePort();
  fs.writeFileSync(path.join(dir, 'config.xml'), config(dir, port));
  fs.writeFileSync(path.join(dir, 'users.xml'), USERS);
  const log = fs.openSync(path.join(dir, 'server.log'), 'w');
  const child = spawn(CLICKHOUSE_BINARY, [`--config-file=${path.join(dir, 'config.xml')}`], { cwd: dir, stdio: ['ignore', log, log] });
  fs.closeSync(log);
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitForPing(url, () => child.exitCode, path.join(dir, 'server.log'));
    const version = (await sql(url, 'SELECT version()')).trim();
    progress(`ClickHouse ${version}: loading ggr`);
    const started = performance.now();
    await loadGgr(url, release, dir);
    const loadSeconds = (performance.now() - started) / 1000;
    const get = async (path_: string) => {
      const res = await request(`${url}${path_}`);
      const body = Buffer.from(await res.body.arrayBuffer());
      if (res.statusCode !== 200)
        throw new Error(`ClickHouse answered ${path_.slice(0, 80)} with ${res.statusCode}: ${body.toString().slice(0, 300)}`);
      return body;
    };
    return { url, version, loadSeconds, get, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function waitForPing(url: string, exitCode: () => number | null, logFile: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (exitCode() !== null)
      throw new Error(`clickhouse-server exited with ${exitCode()}: ${fs.readFileSync(logFile, 'utf8').slice(-500)}`);
    const ok = await request(`${url}/ping`).then(
      async (res) => (await res.body.text()) === 'Ok.\n',
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`clickhouse-server did not answer /ping within 60 s (log: ${logFile})`);
}

async function sql(url: string, text: string, body?: fs.ReadStream): Promise<string> {
  const res = await request(body ? `${url}/?query=${encodeURIComponent(text)}` : url, { method: 'POST', body: body ?? text });
  const answer = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`ClickHouse: ${text.slice(0, 100)}: ${res.statusCode} ${answer.slice(0, 300)}`);
  return answer;
}

const chType = (dim: string) => (INTEGER_DIMENSIONS.has(dim) ? 'Int32' : 'String');

/** ggr's rows, numbered in serving order, into a MergeTree ordered by that number. */
async function loadGgr(url: string, release: ReleaseOnDisk, dir: string): Promise<void> {
  const csv = path.join(dir, 'ggr.csv');
  const db = await Database.open({ connections: 1, threads: 2 });
  const connection = await db.connect();
  try {
    const file = quoteLiteral(path.join(release.dir, release.manifest.datasets.ggr!.file));
    const dims = ggr.dimensions.map(quoteIdent);
    // The loader's order: years as integers, strings in byte order (DuckDB's default collation).
    const typed = ggr.dimensions.map((d) => `${quoteIdent(d)}::${INTEGER_DIMENSIONS.has(d) ? 'INTEGER' : 'VARCHAR'} AS ${quoteIdent(d)}`);
    await connection.run(`COPY (
      SELECT (row_number() OVER (ORDER BY ${dims.join(', ')}) - 1) AS rid, ${dims.join(', ')}, ggr
      FROM (SELECT ${typed.join(', ')}, ggr::DOUBLE AS ggr FROM read_parquet(${file}))
      ORDER BY rid
    ) TO ${quoteLiteral(csv)} (FORMAT CSV, HEADER false)`);
  } finally {
    connection.closeSync();
    db.close();
  }
  const columns = ggr.dimensions.map((d) => `${d} ${chType(d)}`).join(', ');
  await sql(url, `CREATE TABLE ggr (rid UInt32, ${columns}, ggr Float64) ENGINE = MergeTree ORDER BY rid`);
  await sql(url, 'INSERT INTO ggr FORMAT CSV', fs.createReadStream(csv));
  // One part, as a table loaded once and then only read would end up.
  await sql(url, 'OPTIMIZE TABLE ggr FINAL');
  fs.rmSync(csv);
}

const literal = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** The page as a ClickHouse user would ask for it: first 1000 matches in serving order. */
function pageSql(filters: ReadonlyMap<string, readonly string[]>): string {
  const where = [...filters].map(
    ([dim, values]) => `${dim} IN (${values.map((v) => (INTEGER_DIMENSIONS.has(dim) ? String(Number(v)) : literal(v))).join(', ')})`,
  );
  return `SELECT rid, ${ggr.dimensions.join(', ')}, ggr FROM ggr WHERE ${where.join(' AND ')} ORDER BY rid LIMIT 1000 FORMAT JSONEachRow`;
}

function checkSameRows(body: Buffer, page: OurPage): void {
  const rows = body
    .toString()
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const problem =
    rows.length !== page.rids.length
      ? `${rows.length} rows, ours ${page.rids.length}`
      : rows
          .map((row, i) => {
            const ours = page.data[i]!;
            const same =
              row.rid === page.rids[i] &&
              row.ggr === ours.values.ggr &&
              isDeepStrictEqual(Object.fromEntries(ggr.dimensions.map((d) => [d, row[d]])), ours.dimensions);
            return same ? undefined : `row ${i}: ${JSON.stringify(row)} against rid ${page.rids[i]} ${JSON.stringify(ours)}`;
          })
          .find(Boolean);
  if (problem) throw new Error(`ClickHouse does not return our page (${problem}); fix the peer's load before timing it`);
}
