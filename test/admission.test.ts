import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { OpenExports } from '../src/admission/open-exports.ts';
import { Admission, DeadlineError, QueueFullError } from '../src/admission/queue.ts';

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

queue('a job cancelled while it waits never runs, and leaves the queue at once', async () => {
  const g = gate();
  const admission = new Admission({ concurrency: 1, perKey: 1, maxWaitMs: 60_000, clock: Date.now });
  const first = admission.run('A', 'aggregate', g.job('a1'));
  const gone = new AbortController();
  const waiting = admission.run('B', 'aggregate', g.job('b1'), { signal: gone.signal });
  const next = admission.run('C', 'aggregate', g.job('c1'));
  await settle();
  assert.is(admission.queued, 2);
  gone.abort(new Error('client gone'));
  assert.is(await waiting.catch((err: Error) => err.message), 'client gone');
  assert.is(admission.queued, 1);
  g.finish('a1');
  await first;
  await settle();
  assert.equal(g.started, ['a1', 'c1'], 'b1 never started; c1 took the turn');
  g.finish('c1');
  await next;
});

queue('a running job cancelled: its caller is answered and its turn let go at once; its work is told through its signal', async () => {
  const admission = new Admission({ concurrency: 1, perKey: 1, maxWaitMs: 60_000, clock: Date.now });
  const gone = new AbortController();
  let told: unknown;
  const running = admission.run(
    'A',
    'revisions',
    (signal) =>
      new Promise<string>(() => {
        signal.addEventListener('abort', () => (told = signal.reason));
      }),
    { signal: gone.signal },
  );
  await settle();
  assert.is(admission.active, 1);
  const reason = new Error('client gone');
  gone.abort(reason);
  assert.is(await running.catch((err: unknown) => err), reason);
  assert.is(told, reason, "the work's signal carries the caller's reason");
  assert.is(admission.active, 0, 'the turn is free although the work never settled');
  assert.is(await admission.run('B', 'revisions', async () => 'next'), 'next');
});

queue('past its deadline a running job rejects with DeadlineError; the deadline counts from its turn, not from its wait', async () => {
  const g = gate();
  const admission = new Admission({ concurrency: 1, perKey: 1, maxWaitMs: 60_000, clock: Date.now });
  const first = admission.run('A', 'aggregate', g.job('a1'));
  let aborted = false;
  const late = admission.run(
    'B',
    'aggregate',
    (signal) =>
      new Promise<string>((resolve) => {
        signal.addEventListener('abort', () => (aborted = true));
        setTimeout(() => resolve('done'), 60);
      }),
    { deadlineMs: 30 },
  );
  // Waiting longer than its deadline for its turn does not time it out.
  await new Promise((resolve) => setTimeout(resolve, 80));
  g.finish('a1');
  await first;
  const err = await late.catch((e: unknown) => e);
  assert.instance(err, DeadlineError);
  assert.is((err as DeadlineError).deadlineMs, 30);
  assert.ok(aborted);
  assert.is(admission.active, 0);
});

queue('a job that is not refusable waits past the wait bound', async () => {
  const g = gate();
  const admission = new Admission({ concurrency: 1, perKey: 1, maxWaitMs: 20, clock: Date.now });
  const first = admission.run('A', 'export', g.job('a1'));
  const refused = admission.run('B', 'export', g.job('b1')).catch((e: unknown) => e);
  const kept = admission.run('C', 'export', g.job('c1'), { refusable: false });
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.instance(await refused, QueueFullError);
  g.finish('a1');
  await first;
  await settle();
  assert.equal(g.started, ['a1', 'c1']);
  g.finish('c1');
  assert.is(await kept, 'c1');
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
