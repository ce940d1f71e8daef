import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { timedFor } from '../bench/ceilings/duckdb-pages.ts';
import { rounds } from '../bench/runner/measure.ts';
import { WRK_BINARY, WRK_SKIP_REASON } from '../bench/runner/wrk.ts';
import { requiring } from './helpers/skip.ts';

// A ceiling run in the bench's own process (DuckDB alone) must be timed in the
// service's rounds, in its turn, with one worker per connection: timed once before
// the server started, it met another stretch of the shared machine than the service
// did, and the ratio between them swung with it.

const withWrk = requiring(test, WRK_BINARY ? undefined : WRK_SKIP_REASON, 'bench-rounds.test.ts');

const BODY = Buffer.from('{"data":[]}');

withWrk('a local side is timed in its turn in every round, one worker per connection, and gets a figure like a server side', async () => {
  let answered = 0;
  const server = http.createServer((_req, res) => {
    answered++;
    res.end(BODY);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const calls: Array<{ workers: number; seconds: number; answeredBefore: number; concurrent: number }> = [];
  try {
    const local = {
      local: async (workers: number, seconds: number) => {
        let running = 0;
        let most = 0;
        const call = { workers, seconds, answeredBefore: answered, concurrent: 0 };
        calls.push(call);
        const run = await timedFor(
          async () => {
            most = Math.max(most, ++running);
            await new Promise((resolve) => setImmediate(resolve));
            running--;
            return BODY;
          },
          workers,
          seconds,
        );
        call.concurrent = most;
        return run;
      },
    };
    const service = { url, requests: [{ path: '/', headers: {}, status: 200, body: BODY }] };
    const [timed] = await rounds([{ ceilings: { duckdb: local }, service }], 4, { rounds: 2, seconds: 1, warmup: 20 });

    assert.is(calls.length, 3, 'a warm-up, then one run per round');
    assert.ok(
      calls.every((c) => c.workers === 4 && c.concurrent === 4),
      JSON.stringify(calls),
    );
    assert.equal(
      calls.slice(1).map((c) => c.seconds),
      [1, 1],
    );
    // Round 1 runs the ceiling first, round 2 the service first: the service's two
    // timed runs fall between the ceiling's.
    const [, first, second] = calls;
    assert.is(first!.answeredBefore, 20, 'round 1 times the ceiling before the service');
    assert.ok(second!.answeredBefore > first!.answeredBefore, 'the service is timed between them');
    assert.is(
      second!.answeredBefore,
      answered - service.requests.length,
      'round 2 times the service before the ceiling (only the closing check comes after)',
    );

    assert.ok(timed!.ceilings.duckdb!.count > 0 && timed!.ceilings.duckdb!.bytes === BODY.length, JSON.stringify(timed!.ceilings.duckdb));
    assert.ok(
      timed!.ceilingHalves.duckdb![0].count > 0 && timed!.ceilingHalves.duckdb![1].count > 0,
      'each half of the rounds has the ceiling',
    );
    const cpu = timed!.ceilings.duckdb!.serverCpu!;
    assert.ok(cpu > 0 && cpu < 4, `this process's CPU share while it ran: ${cpu}`);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

test.run();
