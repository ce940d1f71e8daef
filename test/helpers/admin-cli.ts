import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestService } from './service.ts';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');

/** Runs `npm run admin -- …` the way an operator does, against `service`. */
export async function adminCli(service: Pick<TestService, 'stateDir' | 'adminUrl'>, ...args: string[]) {
  const env = { ...process.env, STATE_DIR: service.stateDir, ADMIN_PORT: new URL(service.adminUrl).port };
  try {
    const { stdout, stderr } = await run('node', ['--import', 'tsx', 'src/cli/admin.ts', ...args], { cwd: ROOT, env, timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const failed = err as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}
