import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { latestRelease } from '../../src/releases/on-disk.ts';
import { startServer } from '../../tools/service-process.ts';
import { startBare } from '../ceilings/bare.ts';
import { wrk } from '../runner/wrk.ts';
import { capture, PAGE } from '../scenarios/suite.ts';

// Instructions a cached br hit costs, counted by valgrind's callgrind: user space only,
// and the same from one run to the next on the same build, where the CPU time a request
// takes on a shared machine moves by a third between runs. The service (the checkout at
// --root, by default this one) and the Koa floor answering the same bytes each run under
// callgrind, are warmed at one client, then count --requests sequential hits. Reported
// per hit: the main thread (the request's own work) and every thread (V8's compiler and
// GC helpers, libuv's pool). Needs valgrind and wrk (Debian: apt-get install valgrind wrk).
// --env NAME=VALUE (repeatable) starts the service with that setting: BENCH_DISABLE_USAGE=true
// against none gives what counting usage costs a hit (docs/performance.md "Usage counting").
//   npx tsx bench/scripts/instructions.ts [--root CHECKOUT] [--data DATA_DIR] [--requests N] [--warmup SECONDS] [--env NAME=VALUE]

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const { values: args } = parseArgs({
  options: {
    root: { type: 'string', default: ROOT },
    data: { type: 'string', default: path.join(ROOT, 'tmp', 'bench', 'small') },
    requests: { type: 'string', default: '2000' },
    warmup: { type: 'string', default: '60' },
    env: { type: 'string', multiple: true, default: [] },
  },
});
const DATA_DIR = path.resolve(args.data);
const REQUESTS = Number(args.requests);
if (!(await latestRelease(DATA_DIR)))
  throw new Error(`${DATA_DIR}: no release; run npm run bench once (it makes tmp/bench/small), or pass --data DIR`);

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'dqs-instructions-'));
/** callgrind, instrumenting nothing until asked, one output file per thread. */
const launcher = (name: string) => [
  'valgrind',
  '--quiet',
  '--tool=callgrind',
  '--instr-atstart=no',
  '--smc-check=all-non-file',
  '--separate-threads=yes',
  `--callgrind-out-file=${path.join(work, `${name}.%p`)}`,
];

/** Warms `url` at one client, then counts the instructions of `REQUESTS` sequential requests: per request, main thread and all threads. */
async function count(name: string, pid: number, url: string, headers: Record<string, string>): Promise<{ main: number; all: number }> {
  await wrk(url.slice(0, url.indexOf('/', 8)), [{ path: url.slice(url.indexOf('/', 8)), headers, status: 200 }], 1, {
    seconds: Number(args.warmup),
  });
  execFileSync('callgrind_control', ['-i', 'on', String(pid)], { stdio: 'ignore' });
  for (let i = 0; i < REQUESTS; i++) await (await request(url, { headers })).body.arrayBuffer();
  execFileSync('callgrind_control', ['-i', 'off', String(pid)], { stdio: 'ignore' });
  execFileSync('callgrind_control', ['-d', String(pid)], { stdio: 'ignore' });
  // The dump's files: <name>.<pid>.1-<thread>, the main thread 01.
  const totals = fs
    .readdirSync(work)
    .filter((f) => f.startsWith(`${name}.${pid}.1-`))
    .map((f) => ({
      main: f.endsWith('-01'),
      total: Number(/^totals: (\d+)/m.exec(fs.readFileSync(path.join(work, f), 'utf8'))?.[1] ?? 0),
    }));
  const sum = (list: typeof totals) => list.reduce((n, t) => n + t.total, 0) / REQUESTS;
  return { main: sum(totals.filter((t) => t.main)), all: sum(totals) };
}

const format = (n: number) => Math.round(n).toLocaleString('en');
try {
  console.log(`starting ${args.root}'s server under callgrind (slow: a minute or more)`);
  const service = await startServer(
    { DATA_DIR, STATE_DIR: path.join(work, 'state'), ...Object.fromEntries(args.env.map((pair) => pair.split(/=(.*)/s).slice(0, 2))) },
    path.join(work, 'service.log'),
    path.resolve(args.root),
    [],
    launcher('service'),
  );
  let ours: { main: number; all: number };
  let answer: Awaited<ReturnType<typeof capture>>;
  try {
    const headers = { ...service.headers, 'accept-encoding': 'br' };
    answer = await capture(service.url, PAGE, headers, 200);
    ours = await count('service', service.pid, `${service.url}${PAGE}`, headers);
  } finally {
    await service.stop();
  }
  console.log('starting the Koa floor under callgrind');
  const floor = await startBare([answer], path.join(work, 'koa'), 'koa', launcher('koa'));
  let theirs: { main: number; all: number };
  try {
    theirs = await count('koa', floor.pid, `${floor.url}${floor.requests([answer])[0]!.path}`, {});
  } finally {
    await floor.stop();
  }
  console.log(`a cached br hit, instructions a request over ${REQUESTS} (main thread; every thread):`);
  console.log(`  service    ${format(ours.main)}; ${format(ours.all)}`);
  console.log(`  Koa floor  ${format(theirs.main)}; ${format(theirs.all)}`);
  console.log(`  ratio      ${(ours.main / theirs.main).toFixed(2)}×; ${(ours.all / theirs.all).toFixed(2)}×`);
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
