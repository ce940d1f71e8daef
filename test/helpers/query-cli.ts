import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** `npm run --silent query -- …args` as a user types it, with `env` over a clean DQS_* environment; killed after 60 s. */
export function runQueryCli(
  args: string[],
  env: Record<string, string | undefined>,
): Promise<{ code: number | null; stdout: Buffer; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', 'query', '--', ...args], {
      cwd: ROOT,
      env: { ...process.env, DQS_API_KEY: undefined, DQS_URL: undefined, ...env },
    });
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    const timer = setTimeout(() => child.kill(), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out), stderr });
    });
  });
}
