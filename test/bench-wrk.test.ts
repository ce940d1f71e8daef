import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cpuSeconds, WRK_BINARY, WRK_SKIP_REASON, wrk, wrkScript } from '../bench/runner/wrk.ts';
import { requiring } from './helpers/skip.ts';

// The bench's load client (bench/runner/wrk.ts) against a real node:http server on loopback:
// what it reports must be what the server saw, and a wrong status must stop a run.

async function rejects(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (err: Error) => err,
  );
  assert.ok(error && pattern.test(error.message), `expected a rejection matching ${pattern}, got ${error?.message ?? 'success'}`);
}

const withWrk = requiring(test, WRK_BINARY ? undefined : WRK_SKIP_REASON, 'bench-wrk.test.ts');

async function serve(handler: http.RequestListener) {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

test('a single request is set once in the script; a list is built per thread; quoting refuses what Lua could not hold', () => {
  const one = wrkScript([{ path: '/v1/x?a=1', headers: { 'x-api-key': 'k' }, status: 200 }], false, 1);
  assert.ok(one.includes('wrk.path = [==[/v1/x?a=1]==]') && one.includes('wrk.headers[ [==[x-api-key]==] ] = [==[k]==]'), one);
  assert.not.ok(one.includes('request = function'));
  const list = wrkScript(
    [
      { path: '/a', headers: {}, status: 200 },
      { path: '/b', headers: {}, status: 200 },
    ],
    true,
    2,
  );
  assert.ok(list.includes('request = function') && list.includes('response = function') && list.includes('answered == 2'), list);
  assert.throws(() => wrkScript([{ path: '/]==]', headers: {}, status: 200 }], false, 1), /cannot quote/);
});

test('cpuSeconds reads utime and stime past a command name with spaces', () => {
  // Fields 14 and 15 (utime 250, stime 50 ticks): 3 s at 100 ticks a second.
  const stat = `123 (w r k) S 1 123 123 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 2 0 1000 1000000 500`;
  assert.is(cpuSeconds(stat), 3);
});

withWrk('every request of a list is sent, each once with `once`, with its own headers; the run stops when all are answered', async () => {
  const seen: string[] = [];
  // Each answer spins 2 ms, so the server's share stands for at least 80 ms of CPU: a run
  // of bare answers takes a few ms and can read 0 in /proc's 10 ms ticks (it did in one CI run).
  const server = await serve((req, res) => {
    seen.push(`${req.url} ${req.headers['x-api-key']}`);
    for (const until = performance.now() + 2; performance.now() < until; );
    res.end('ok');
  });
  try {
    const requests = Array.from({ length: 40 }, (_, i) => ({ path: `/r${i}`, headers: { 'x-api-key': `key${i}` }, status: 200 }));
    const started = performance.now();
    const run = await wrk(server.url, requests, 4, { seconds: 30, once: true, serverPid: process.pid });
    assert.ok(performance.now() - started < 10_000, 'the run ended when its list was answered, not after 30 s');
    for (const r of requests) assert.ok(seen.includes(`${r.path} ${r.headers['x-api-key']}`), `${r.path} was not sent with its key`);
    // In flight when the last answer came: at most one more per other connection.
    assert.ok(seen.length >= 40 && seen.length <= 43, `${seen.length} requests`);
    assert.ok(run.latencies.length >= 40);
    // A share over a run of a few ms is read in /proc's 10 ms ticks (2.4 in one CI run), so
    // hold the seconds it stands for: ticks not divided by CLK_TCK would read 1 s or more.
    const clientSeconds = run.clientCpu * run.seconds;
    assert.ok(clientSeconds >= 0 && clientSeconds < 1, `wrk used ${clientSeconds} s of CPU in a ${run.seconds} s run`);
    const serverSeconds = (run.serverCpu ?? 0) * run.seconds;
    assert.ok(serverSeconds >= 0.05 && serverSeconds < 1, `the server used ${serverSeconds} s of CPU for 80 ms of work`);
  } finally {
    await server.close();
  }
});

withWrk('a status on the wrong side of 400 fails the run; refusals expected as refusals pass', async () => {
  const server = await serve((req, res) => {
    res.statusCode = req.url === '/refused' ? 429 : 200;
    res.end();
  });
  try {
    await rejects(wrk(server.url, [{ path: '/refused', headers: {}, status: 200 }], 2, { seconds: 1 }), /status over 399/);
    await rejects(wrk(server.url, [{ path: '/fine', headers: {}, status: 429 }], 2, { seconds: 1 }), /status over 399/);
    const run = await wrk(server.url, [{ path: '/refused', headers: {}, status: 429 }], 2, { seconds: 1 });
    assert.ok(run.latencies.length > 10);
  } finally {
    await server.close();
  }
});

test.run();
