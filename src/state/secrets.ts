import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/** STATE_DIR, readable by its owner only, whether created now or found: it holds key hashes and secrets. */
export async function ensureStateDir(stateDir: string): Promise<void> {
  await fs.mkdir(stateDir, { recursive: true, mode: 0o700 });
  // mkdir's mode applies only to a folder it creates.
  await fs.chmod(stateDir, 0o700);
}

/**
 * Reads a secret kept in STATE_DIR, creating it (mode 0600) on first use, so that
 * cursors and the admin token survive restarts. A new secret is written whole under
 * a name of its own and then hard-linked into place: link() fails when the name
 * exists, so replicas starting at once on one STATE_DIR agree on one value, and none
 * can read a file still being written (an exclusive create made the name first and
 * the content after, and a replica reading in between refused to start).
 */
export async function readOrCreateSecret(stateDir: string, name: string, bytes = 32): Promise<string> {
  const file = path.join(stateDir, name);
  const text = (await readIfPresent(file)) ?? (await create(file, bytes));
  const value = text.trim();
  if (!/^[0-9a-f]{32,}$/.test(value)) throw new Error(`${file}: not a hex secret; delete the file to have a new one made at start`);
  return value;
}

async function readIfPresent(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** The file's content once one process has created it: this one's, or the one that won. */
async function create(file: string, bytes: number): Promise<string> {
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  await fs.writeFile(tmp, `${randomBytes(bytes).toString('hex')}\n`, { flag: 'wx', mode: 0o600 });
  try {
    await fs.link(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    await fs.rm(tmp, { force: true });
  }
  return fs.readFile(file, 'utf8');
}

export const SECRET_FILES = { cursor: 'cursor-secret', adminToken: 'admin-token' } as const;
