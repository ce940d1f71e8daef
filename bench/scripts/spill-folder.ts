import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { startServer } from '../../tools/service-process.ts';
import { cancelReleases } from '../scenarios/cancel.ts';

// `npx tsx bench/scripts/spill-folder.ts [--root CHECKOUT] [--keep BYTES]`: DuckDB's
// spill folder on a server with default settings (REVISIONS_KEEP_BYTES from --keep)
// over the two 1x releases of bench/scenarios/cancel.ts: its size on disk and modes
// after each of nine diffs kept (four full-size), then after a `kill -9` and a restart
// on the same STATE_DIR. --root runs another checkout's server (the code before a
// change, whose folder was dqs-duckdb-<pid> in the OS temp dir) the same way.

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const { values: args } = parseArgs({ options: { root: { type: 'string' }, keep: { type: 'string' } } });
const WORK = path.join(ROOT, 'tmp', 'bench');
const DIFFS = [
  '',
  '&change=changed',
  '&change=added',
  '&change=removed',
  '&change=added&change=changed',
  '&change=removed&change=changed',
  '&fx=USD',
  '&fx=EUR',
  '&fx=GBP',
];

const dataDir = await cancelReleases(WORK, (text) => console.error(`  … ${text}`));
const stateDir = fs.mkdtempSync(path.join(WORK, 'state-spill-'));
const folderOf = (pid: number) => {
  const ours = path.join(stateDir, 'duckdb-tmp', `${os.hostname()}-${pid}`);
  return fs.existsSync(ours) ? ours : path.join(os.tmpdir(), `dqs-duckdb-${pid}`);
};
const files = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).map((f) => fs.statSync(path.join(dir, f))) : []);
const onDisk = (dir: string) => files(dir).reduce((sum, s) => sum + s.blocks * 512, 0);
const mode = (m: number) => (m & 0o777).toString(8);
const describe = (dir: string) =>
  fs.existsSync(dir)
    ? `${(onDisk(dir) / 1e6).toFixed(1)} MB, folder ${mode(fs.statSync(dir).mode)}, files ${[...new Set(files(dir).map((s) => mode(s.mode)))].join(' ') || 'none'} (${dir})`
    : `absent (${dir})`;
const env = { DATA_DIR: dataDir, STATE_DIR: stateDir, QUERY_TIMEOUT_MS: '600000', ...(args.keep && { REVISIONS_KEEP_BYTES: args.keep }) };
const root = args.root && path.resolve(args.root);
const server = await startServer(env, path.join(WORK, 'logs', 'spill-folder.log'), root);
let peak = 0;
for (const diff of DIFFS) {
  const res = await request(`${server.url}/v1/revisions?metric=ggr&from=2026-01&to=2026-02&limit=10${diff}`, {
    headers: server.headers,
    headersTimeout: 600_000,
    bodyTimeout: 600_000,
  });
  await res.body.dump();
  // Kept diffs are dropped beside the answer.
  await new Promise((r) => setTimeout(r, 500));
  peak = Math.max(peak, onDisk(folderOf(server.pid)));
  console.log(`${diff || '(the whole diff)'}: ${res.statusCode}, spill folder ${describe(folderOf(server.pid))}`);
}
console.log(`peak ${(peak / 1e6).toFixed(1)} MB on disk, REVISIONS_KEEP_BYTES ${args.keep ?? '1 GiB'}`);
const killed = folderOf(server.pid);
process.kill(server.pid, 'SIGKILL');
await new Promise((r) => setTimeout(r, 1000));
const again = await startServer(env, path.join(WORK, 'logs', 'spill-folder-2.log'), root);
console.log(`after kill -9 and a restart: the killed process's folder ${describe(killed)}; the new one's ${describe(folderOf(again.pid))}`);
await again.stop();
fs.rmSync(killed, { recursive: true, force: true });
fs.rmSync(stateDir, { recursive: true, force: true });
