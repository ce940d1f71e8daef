import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/**
 * This process's scratch folder, STATE_DIR/scratch/<host>-<pid>, for files a request
 * writes and removes when it ends (a filtered Parquet export). Made as
 * openProcessFolder makes it.
 */
export const openScratch = (stateDir: string): Promise<string> => openProcessFolder(path.join(stateDir, 'scratch'));

/**
 * This process's own folder under `root`, `<host>-<pid>`, made empty at start and
 * readable by this user alone (0700, `root` too): what is written there (a scratch
 * file, DuckDB's spilled pages) holds served data. The folders that processes of this
 * host left when they were killed are removed: nothing outlives a restart. Replicas
 * that share `root` each sweep only their own host's.
 */
export async function openProcessFolder(root: string): Promise<string> {
  await fs.mkdir(root, { recursive: true, mode: 0o700 });
  const host = os.hostname();
  for (const name of await fs.readdir(root)) {
    const pid = name.startsWith(`${host}-`) ? Number(name.slice(host.length + 1)) : Number.NaN;
    if (Number.isInteger(pid) && (pid === process.pid || !alive(pid))) await fs.rm(path.join(root, name), { recursive: true, force: true });
  }
  const dir = path.join(root, `${host}-${process.pid}`);
  await fs.mkdir(dir, { mode: 0o700 });
  return dir;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: a process of another user has that pid; alive, and not ours to sweep.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
