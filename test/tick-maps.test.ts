import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

// src/runtime/tick-maps.ts on node itself: full GCs with no TickObject alive turn the
// inline caches of nextTick's TickObject literal megamorphic, and holding one
// TickObject keeps them as they were. Read from V8's own %DebugPrint of nextTick.

const ROOT = path.resolve(import.meta.dirname, '..');

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

test('holding one TickObject keeps nextTick\'s literal caches from going megamorphic through full GCs', () => {
  const without = literalCaches(false);
  if (without.length === 0) {
    console.log('  skipped: this node\'s %DebugPrint does not list feedback slots');
    return;
  }
  assert.ok(without.includes('MEGAMORPHIC'), `without the held TickObject the caches stay ${without.join(', ')}: this node no longer drops the maps, and src/runtime/tick-maps.ts can go`);
  const kept = literalCaches(true);
  assert.equal(kept.filter((state) => state === 'MEGAMORPHIC'), [], `with it: ${kept.join(', ')}`);
});

test.run();
