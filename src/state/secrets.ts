import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/** STATE_DIR, created readable by its owner only: it holds key hashes and secrets. */
export async function ensureStateDir(stateDir: string): Promise<void> {
  await fs.mkdir(stateDir, { recursive: true, mode: 0o700 });
}

/**
 * Reads a secret kept in STATE_DIR, creating it (mode 0600) on first use, so that
 * cursors and the admin token survive restarts. `wx` makes two processes starting
 * at once agree on one value.
 */
export async function readOrCreateSecret(stateDir: string, name: string, bytes = 32): Promise<string> {
  const file = path.join(stateDir, name);
  try {
    await fs.writeFile(file, randomBytes(bytes).toString('hex') + '\n', { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const value = (await fs.readFile(file, 'utf8')).trim();
  if (!/^[0-9a-f]{32,}$/.test(value)) throw new Error(`${file}: not a hex secret; delete the file to have a new one made at start`);
  return value;
}

export const SECRET_FILES = { cursor: 'cursor-secret', adminToken: 'admin-token' } as const;
