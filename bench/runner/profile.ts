import fs from 'node:fs';
import path from 'node:path';
import { startServer } from '../../tools/service-process.ts';
import { AGGREGATE } from '../ceilings/duckdb-aggregate.ts';
import { capture, PAGE } from '../scenarios/suite.ts';
import { load, type Stats, summarizeRuns } from './load.ts';
import { formatTop, topFunctions, type Window } from './profile-top.ts';
import { line, progress } from './report.ts';
import { commit } from './result.ts';
import { wrk } from './wrk.ts';

// `npm run bench -- --profile SCENARIO`: the service under one scenario's load (wrk,
// 16 connections) with node's --cpu-prof. The profile is written under
// bench/results/profiles/, and the top 15 functions by self time are printed, counted
// over the timed load only (the profile's clock is the monotonic one process.hrtime
// reads, so loading the release and the warm-up are left out).

const ROOT = path.resolve(import.meta.dirname, '..', '..');

interface Setup {
  readonly env: Record<string, string>;
  readonly path: string;
  readonly headers: Record<string, string>;
}

const UNCACHED = { CACHE_MAX_BYTES: '0', AGGREGATE_KEEP_BYTES: '0' };
const SETUPS: Record<string, Setup> = {
  'uncached-page': { env: UNCACHED, path: PAGE, headers: {} },
  'csv-page': { env: UNCACHED, path: PAGE, headers: { accept: 'text/csv' } },
  'arrow-page': { env: UNCACHED, path: PAGE, headers: { accept: 'application/vnd.apache.arrow.stream' } },
  'cached-json': { env: {}, path: PAGE, headers: { 'accept-encoding': 'identity' } },
  'cached-br': { env: {}, path: PAGE, headers: { 'accept-encoding': 'br' } },
  'uncached-aggregate': { env: UNCACHED, path: AGGREGATE, headers: {} },
  'cached-aggregate': { env: {}, path: AGGREGATE, headers: {} },
};
export const PROFILE_SCENARIOS = Object.keys(SETUPS);

const nowUs = () => Number(process.hrtime.bigint() / 1000n);

export async function profileScenario(id: string, o: { dataDir: string; work: string; results: string; seconds: number }): Promise<void> {
  const setup = SETUPS[id]!;
  const dir = path.join(o.results, 'profiles');
  fs.mkdirSync(dir, { recursive: true });
  const name = `${new Date().toISOString().slice(0, 19).replace(/:/g, '')}-${commit(ROOT).commit}-${id}.cpuprofile`;
  // Each thread writes its own profile (tsx's loader runs in a worker): node names them CPU.<date>.<time>.<pid>.<thread>.<n>.
  const written = fs.mkdtempSync(path.join(o.work, 'profile-'));
  progress(`starting the service with --cpu-prof (loading ${path.relative(ROOT, o.dataDir)})`);
  const server = await startServer(
    { DATA_DIR: o.dataDir, STATE_DIR: path.join(o.work, 'state-profile'), ...setup.env },
    path.join(o.work, 'logs', 'profile.log'),
    ROOT,
    ['--cpu-prof', `--cpu-prof-dir=${written}`],
  );
  let window: Window;
  let run: Stats;
  try {
    const headers = { ...server.headers, ...setup.headers };
    const answer = await capture(server.url, setup.path, headers, 200);
    const requests = [{ path: setup.path, headers, status: 200, body: answer.body }];
    progress(`${id}: warming up, each answer checked`);
    await load(server.url, requests, 16, 500);
    progress(`${id}: ${o.seconds} s of load at 16 connections`);
    const fromUs = nowUs();
    run = summarizeRuns([await wrk(server.url, requests, 16, { seconds: o.seconds, serverPid: server.pid })]);
    window = { fromUs, toUs: nowUs() };
    await load(server.url, requests, 1, 1);
  } finally {
    await server.stop();
  }
  const main = fs.readdirSync(written).find((f) => f.includes(`.${server.pid}.0.`));
  if (!main) throw new Error(`the server wrote no main-thread profile into ${written}`);
  const file = path.join(dir, name);
  fs.renameSync(path.join(written, main), file);
  fs.rmSync(written, { recursive: true, force: true });
  line(
    `${id}: ${run.rps.toFixed(0)} req/s at 16 connections, p50 ${run.p50.toFixed(2)} ms; service ${((run.serverCpu ?? 0) * 100).toFixed(0)}% of a core, wrk ${((run.clientCpu ?? 0) * 100).toFixed(0)}%`,
  );
  line(`profile: ${path.relative(ROOT, file)} (open it in Chrome DevTools' Performance panel)`);
  line(`top 15 functions by self time during the load:\n${formatTop(topFunctions(file, ROOT, 15, window))}`);
}
