import fs from 'node:fs/promises';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readOrCreateSecret } from '../src/state/secrets.ts';
import { tempDir } from './helpers/service.ts';

// Replicas sharing one STATE_DIR start at once: every reader must get the one secret
// that ends up in the file, never a half-written one.

const ROUNDS = 3;
const CALLS = 8;
/** Far longer than a real secret: its write spans several event-loop turns, so later calls overlap it. */
const BYTES = 1 << 20;

test('calls overlapping the creation of a secret all return the whole secret the file keeps', async () => {
  const root = await tempDir();
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const dir = path.join(root, String(round));
      await fs.mkdir(dir);
      // Call i starts i event-loop turns after the first, while the first may still be writing.
      const values = await Promise.all(
        Array.from({ length: CALLS }, async (_, i) => {
          for (let turn = 0; turn < i; turn++) await nextTurn();
          return readOrCreateSecret(dir, 'cursor-secret', BYTES);
        }),
      );
      const kept = (await fs.readFile(path.join(dir, 'cursor-secret'), 'utf8')).trim();
      assert.is(kept.length, 2 * BYTES);
      assert.is(values.filter((v) => v !== kept).length, 0, `round ${round}: a call returned another value than the file's`);
      assert.equal(await fs.readdir(dir), ['cursor-secret'], 'no temporary file left behind');
    }
  } finally {
    await fs.rm(root, { recursive: true, force: true });
  }
});

test.run();
