import fsSync from 'node:fs';
import fs from 'node:fs/promises';

// Process-tree checks for tests that start real processes (npm start, the cluster
// script) and must prove that stopping the top one stopped all of them.

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Every process below `pid`, read from /proc (Linux). */
export async function descendants(pid: number): Promise<number[]> {
  const direct = (await fs.readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '')).split(' ').filter(Boolean).map(Number);
  return [...direct, ...(await Promise.all(direct.map(descendants))).flat()];
}

/**
 * The server as `npm start` runs it: node with package.json's config.nodeFlags, on the
 * compiled JavaScript that `npm run build` (run by `npm ci` and by `npm test` before
 * the suites) writes to dist/, without tsx. Spawn `process.execPath` with these arguments.
 */
export const SERVER_ARGS: readonly string[] = [
  ...(
    JSON.parse(fsSync.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { config: { nodeFlags: string } }
  ).config.nodeFlags
    .split(' ')
    .filter(Boolean),
  new URL('../../dist/main.js', import.meta.url).pathname,
];
