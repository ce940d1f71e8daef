import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { request } from 'undici';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
/** A 16x release loads in one to three minutes on a busy 2-core machine. */
const READY_TIMEOUT_MS = 600_000;

export interface BenchServer {
  readonly url: string;
  /** The admin listener (its /metrics needs no token). */
  readonly adminUrl: string;
  readonly pid: number;
  /** Where the server's stdout (its JSON log, a line per request) goes. */
  readonly logFile: string;
  /** A fresh API key's header. */
  readonly headers: Record<string, string>;
  stop(): Promise<void>;
}

const built = new Set<string>();

/**
 * What `npm start` runs in the checkout at `root`: node with its config.nodeFlags on its compiled server, built first
 * (once per checkout and bench run); a checkout from before the server was compiled
 * (a --baseline of an older commit) runs src/main.ts through tsx, as its npm start did.
 */
function serverEntry(root: string): string[] {
  const { scripts, config } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string>; config?: { nodeFlags?: string } };
  if (!scripts.build) return ['--import', 'tsx', 'src/main.ts'];
  if (!built.has(root)) {
    const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
    if (build.status !== 0) throw new Error(`${root}: npm run build failed (exit ${build.status})`);
    built.add(root);
  }
  return [...(config?.nodeFlags ?? '').split(' ').filter(Boolean), path.join(root, 'dist', 'main.js')];
}

/**
 * Starts `npm start`'s entry point (of the checkout at `root`) in its own process with
 * these settings (DATA_DIR and STATE_DIR among them) on free ports; resolves once it
 * serves, with an API key; `nodeArgs` go to node (a profile's --cpu-prof). Its stdout goes straight to `logFile`, not through a pipe
 * the bench would have to drain: on 2 cores, reading a line per request took CPU from
 * the load client during service runs only.
 */
export async function startServer(env: Record<string, string>, logFile: string, root = ROOT, nodeArgs: readonly string[] = []): Promise<BenchServer> {
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  const entry = serverEntry(root);
  const out = fs.openSync(logFile, 'w');
  const child = spawn(process.execPath, [...nodeArgs, ...entry], {
    cwd: root,
    // Thousands of requests on one key: limits are lifted (a bench-only setting) unless the caller turns them on.
    env: { ...process.env, PORT: '0', ADMIN_PORT: '0', BENCH_DISABLE_LIMITS: 'true', ...env },
    stdio: ['ignore', out, 'inherit'],
  });
  fs.closeSync(out);
  const stop = () => new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
  try {
    const { url, adminUrl } = await waitUntilReady(logFile, () => child.exitCode);
    const token = fs.readFileSync(path.join(env.STATE_DIR!, 'admin-token'), 'utf8').trim();
    const created = await request(`${adminUrl}/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ client: 'bench' }),
    });
    const { key } = (await created.body.json()) as { key: string };
    return { url, adminUrl, pid: child.pid!, logFile, headers: { 'x-api-key': key }, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Follows the log file until the server logs `ready`; its `listening` line holds the addresses. */
async function waitUntilReady(logFile: string, exitCode: () => number | null): Promise<{ url: string; adminUrl: string }> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let addresses: { url: string; adminUrl: string } | undefined;
  let read = 0;
  let partial = '';
  while (Date.now() < deadline) {
    const text = fs.readFileSync(logFile, 'utf8');
    const lines = (partial + text.slice(read)).split('\n');
    read = text.length;
    partial = lines.pop()!;
    for (const line of lines) {
      const entry = JSON.parse(line) as { msg: string; url?: string; adminUrl?: string };
      if (entry.msg === 'listening') addresses = { url: entry.url!, adminUrl: entry.adminUrl! };
      if (entry.msg === 'ready' && addresses) return addresses;
    }
    if (exitCode() !== null) throw new Error(`the server exited with ${exitCode()} before it was ready; its log: ${logFile}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the server was not ready within ${READY_TIMEOUT_MS / 1000} s; its log: ${logFile}`);
}

/** Resident memory of a process in MB, now (VmRSS) and at its peak so far (VmHWM). */
export function processMemory(pid: number): { rss: number; peak: number } {
  const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const mb = (field: string) => Math.round(Number(new RegExp(`${field}:\\s+(\\d+)`).exec(text)![1]) / 1024);
  return { rss: mb('VmRSS'), peak: mb('VmHWM') };
}

/** What the server's /metrics says each loaded release holds, in MB (dqs_release_memory_bytes, all parts). */
export async function releaseMemory(server: BenchServer): Promise<Record<string, number>> {
  const text = await (await request(`${server.adminUrl}/metrics`)).body.text();
  const held: Record<string, number> = {};
  for (const [, release, bytes] of text.matchAll(/^dqs_release_memory_bytes\{release="([^"]+)",part="[^"]+"\} (\d+)/gm)) held[release!] = (held[release!] ?? 0) + Number(bytes) / 1e6;
  return held;
}
