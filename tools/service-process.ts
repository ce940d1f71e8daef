import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { request } from 'undici';

const ROOT = path.resolve(import.meta.dirname, '..');
/** A 16x release loads in one to three minutes on a busy 2-core machine. */
const READY_TIMEOUT_MS = 600_000;

/** The service as `npm start` runs it, in a process of its own (the bench's servers, tests of memory and processes). */
export interface ServiceProcess {
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
  const { scripts, config } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
    config?: { nodeFlags?: string };
  };
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
 * serves, with an API key; `nodeArgs` go to node (a profile's --cpu-prof), and
 * `launcher` runs node (valgrind and its options; the process keeps its pid). Its
 * stdout goes straight to `logFile`, not through a pipe the bench would have to drain:
 * on 2 cores, reading a line per request took CPU from the load client during service
 * runs only.
 */
export async function startServer(
  env: Record<string, string>,
  logFile: string,
  root = ROOT,
  nodeArgs: readonly string[] = [],
  launcher: readonly string[] = [],
): Promise<ServiceProcess> {
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  const entry = serverEntry(root);
  const out = fs.openSync(logFile, 'w');
  const [command = process.execPath, ...args] = [...launcher, process.execPath, ...nodeArgs, ...entry];
  const child = spawn(command, args, {
    cwd: root,
    // Thousands of requests on one key: limits are lifted (a bench-only setting) unless the caller turns them on.
    env: { ...process.env, PORT: '0', ADMIN_PORT: '0', BENCH_DISABLE_LIMITS: 'true', ...env },
    stdio: ['ignore', out, 'inherit'],
  });
  fs.closeSync(out);
  const stop = () =>
    new Promise<void>((resolve) => {
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
export async function releaseMemory(server: ServiceProcess): Promise<Record<string, number>> {
  const text = await (await request(`${server.adminUrl}/metrics`)).body.text();
  const held: Record<string, number> = {};
  for (const [, release, bytes] of text.matchAll(/^dqs_release_memory_bytes\{release="([^"]+)",part="[^"]+"\} (\d+)/gm))
    held[release!] = (held[release!] ?? 0) + Number(bytes) / 1e6;
  return held;
}

/** Resident pages mapped from files (code and read-only data of node and its native libraries), in MB. */
function fileBackedMb(pid: number): number {
  let kb = 0;
  let file = false;
  for (const line of fs.readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) file = / \//.test(line);
    else if (file && line.startsWith('Rss:')) kb += Number(/(\d+)/.exec(line)![1]);
  }
  return Math.round(kb / 1024);
}

/** What the server's resident memory is made of, in MB, from its /metrics and /proc: the parts docs/performance.md names. */
export async function memoryBreakdown(server: ServiceProcess): Promise<string> {
  const text = await (await request(`${server.adminUrl}/metrics`)).body.text();
  const sum = (pattern: RegExp) => [...text.matchAll(pattern)].reduce((mb, m) => mb + Number(m[1]) / 1e6, 0);
  const release = sum(/^dqs_release_memory_bytes\{[^}]*\} (\d+)/gm);
  const parts = {
    'code mapped from files': fileBackedMb(server.pid),
    'V8 heap (committed)': sum(/^dqs_nodejs_heap_size_total_bytes (\d+)/gm),
    'release (columns, rollups, renderers)': release,
    'other JS buffers': sum(/^dqs_nodejs_external_memory_bytes (\d+)/gm) - release,
    'DuckDB (its own accounting)': sum(/^dqs_duckdb_memory_bytes\{[^}]*\} (\d+)/gm),
  };
  const rss = processMemory(server.pid).rss;
  const known = Object.values(parts).reduce((a, b) => a + b, 0);
  return [
    ...Object.entries(parts).map(([name, mb]) => `${name} ${mb.toFixed(0)} MB`),
    `the rest (allocators, stacks) ${(rss - known).toFixed(0)} MB`,
  ].join('; ');
}
