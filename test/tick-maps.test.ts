import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { requiring } from './helpers/skip.ts';

// src/runtime/tick-maps.ts on node itself: full GCs with no TickObject alive turn the
// inline caches of nextTick's TickObject literal megamorphic, and holding one
// TickObject keeps them as they were. Read from V8's own %DebugPrint of nextTick.

const ROOT = path.resolve(import.meta.dirname, '..');

/** The states of the literal's keyed-define caches after the probe's GCs, with the held TickObject or without. */
function literalCaches(keep: boolean): string[] {
  // %DebugPrint writes through C's stdout, whose buffer a pipe loses at exit; a file keeps it.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dqs-tick-maps-'));
  const out = path.join(dir, 'stdout');
  const fd = fs.openSync(out, 'w');
  try {
    const run = spawnSync(process.execPath, ['--allow-natives-syntax', '--expose-gc', '--import', 'tsx', 'test/helpers/tick-maps-probe.ts', ...(keep ? ['--keep'] : [])], { cwd: ROOT, stdio: ['ignore', fd, 'pipe'], encoding: 'utf8', timeout: 60_000 });
    if (run.status !== 0) throw new Error(`the probe exited with ${run.status}: ${run.stderr.slice(0, 500)}`);
    return [...fs.readFileSync(out, 'utf8').matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((m) => m[1]!);
  } finally {
    fs.closeSync(fd);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const without = literalCaches(false);
const withDebugPrint = requiring(test, without.length === 0 ? `node ${process.version}'s %DebugPrint lists no feedback slots` : undefined, 'tick-maps.test.ts');

withDebugPrint('holding one TickObject keeps nextTick\'s literal caches from going megamorphic through full GCs', () => {
  assert.ok(without.includes('MEGAMORPHIC'), `without the held TickObject the caches stay ${without.join(', ')}: this node no longer drops the maps, and src/runtime/tick-maps.ts and KEEP_TICK_MAPS can go`);
  const kept = literalCaches(true);
  assert.equal(kept.filter((state) => state === 'MEGAMORPHIC'), [], `with it: ${kept.join(', ')}`);
});

test.run();
