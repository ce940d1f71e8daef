import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { OpenExports } from '../src/admission/open-exports.ts';
import { Admission, QueueFullError } from '../src/admission/queue.ts';

// The queue for heavy work on its own: turns between keys, the per-key cap, the wait
// bound, and what it tells the metrics. Jobs are promises the test settles by hand, so
// the order of starts is exact.

interface Gate {
  readonly started: string[];
  job(name: string): () => Promise<string>;
  finish(name: string): void;
}

function gate(): Gate {
  const started: string[] = [];
  const finishers = new Map<string, () => void>();
  return {
    started,
    job: (name) => () =>
      new Promise<string>((resolve) => {
        started.push(name);
        finishers.set(name, () => resolve(name));
      }),
    finish: (name) => finishers.get(name)!(),
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

const queue = suite('admission queue');

queue("a key with a backlog does not hold up another key's first job: turns go round-robin", async () => {
  const g = gate();
  const admission = new Admission({ concurrency: 1, perKey: 2, maxWaitMs: 60_000, clock: Date.now });
  const done = ['a1', 'a2', 'a3', 'a4'].map((name) => admission.run('A', 'aggregate', g.job(name)));
  done.push(admission.run('B', 'aggregate', g.job('b1')));
  done.push(admission.run('A', 'aggregate', g.job('a5')));
  done.push(admission.run('B', 'aggregate', g.job('b2')));
  for (let i = 0; i < 7; i++) {
    await settle();
    g.finish(g.started.at(-1)!);
  }
  await Promise.all(done);
  assert.equal(g.started, ['a1', 'a2', 'b1', 'a3', 'b2', 'a4', 'a5']);
});

queue('at most perKey of one key run at once; another key takes the free room', async () => {
  const g = gate();
  const admission = new Admission({ concurrency: 3, perKey: 2, maxWaitMs: 60_000, clock: Date.now });
  const done = ['a1', 'a2', 'a3'].map((name) => admission.run('A', 'revisions', g.job(name)));
  done.push(admission.run('B', 'revisions', g.job('b1')));
  await settle();
  assert.equal(g.started, ['a1', 'a2', 'b1']);
  assert.equal([admission.active, admission.queued], [3, 1]);
  g.finish('a1');
  await settle();
  assert.equal(g.started, ['a1', 'a2', 'b1', 'a3']);
  for (const name of ['a2', 'b1', 'a3']) g.finish(name);
  assert.equal(await Promise.all(done), ['a1', 'a2', 'a3', 'b1']);
  assert.equal([admission.active, admission.queued], [0, 0]);
});

queue('a job that waits past maxWaitMs is refused without running, and its place goes to the next', async () => {
  const g = gate();
  const waits: number[] = [];
  const admission = new Admission({
    concurrency: 1,
    perKey: 1,
    maxWaitMs: 30,
    clock: Date.now,
    observe: { waited: (_kind, seconds) => waits.push(seconds) },
  });
  const first = admission.run('A', 'export', g.job('a1'));
  const late = admission.run('B', 'export', g.job('b1'));
  const refused = await late.then(
    () => undefined,
    (err: unknown) => err,
  );
  assert.instance(refused, QueueFullError);
  // Date.now counts whole milliseconds and timers do not: a 30 ms wait can read as 29.
  assert.ok((refused as QueueFullError).waitedMs >= 29, `waited ${(refused as QueueFullError).waitedMs} ms`);
  assert.equal(g.started, ['a1'], 'the refused job never ran');
  const next = admission.run('B', 'export', g.job('b2'));
  g.finish('a1');
  await settle();
  g.finish('b2');
  assert.equal([await first, await next], ['a1', 'b2']);
  assert.is(waits.length, 2, 'an admitted job reports its wait; a refused one does not');
});

queue('a job that fails frees its turn', async () => {
  const admission = new Admission({ concurrency: 1, perKey: 1, maxWaitMs: 60_000, clock: Date.now });
  const failed = admission.run('A', 'aggregate', () => Promise.reject(new Error('boom')));
  const after = admission.run('A', 'aggregate', async () => 'ran');
  assert.is(await failed.catch((err: Error) => err.message), 'boom');
  assert.is(await after, 'ran');
});

queue.run();

const exports = suite('open exports per key');

exports('a key has at most perKey open; closing one makes room, once however often it is closed', () => {
  const open = new OpenExports(2);
  const a1 = open.begin('A');
  const a2 = open.begin('A');
  assert.ok(a1 && a2);
  assert.is(open.begin('A'), undefined);
  assert.ok(open.begin('B'), 'another key is not affected');
  a1!();
  a1!();
  const a3 = open.begin('A');
  assert.ok(a3);
  assert.is(open.begin('A'), undefined, 'the second close of a1 freed nothing');
});

exports.run();
