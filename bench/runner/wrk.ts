import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Request, Run } from './load.ts';

// Timed load comes from wrk (Debian's package): one C thread on an epoll loop, a few
// percent of a core where the bench's own undici client needed more than the server
// it measured. A Lua script per run sets each request's path and headers; wrk's
// `done` hook prints the run as one JSON line: counts, errors, the latency histogram
// and wrk's own /proc/self/stat, from which its CPU share is read.

export const WRK_BINARY = (() => {
  try {
    return execFileSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
})();
export const WRK_SKIP_REASON = "wrk is not installed: apt-get install wrk (Debian's package; docs/performance.md)";

/** No run lasts longer than this, whatever it was asked. */
const MAX_RUN_SECONDS = 120;
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
/** Printed by a run that sends its list once, when the last answer is in: wrk then gets SIGINT. */
const DONE_MARK = 'dqs-wrk-sent-all';

export interface WrkRun extends Run {
  /** wrk's CPU time over the run's wall time: 0.05 is 5% of one core. */
  readonly clientCpu: number;
  /** The same for the server process, when its pid was given. */
  readonly serverCpu?: number;
}

export interface WrkOptions {
  /** How long the run lasts (whole seconds: wrk's unit). */
  readonly seconds: number;
  /** Send each request once, in order, then stop: a workload whose repeats must meet the cache as first sent. */
  readonly once?: boolean;
  /** The server's pid, for its CPU share. */
  readonly serverPid?: number;
}

interface Done {
  readonly requests: number;
  readonly duration: number;
  readonly bytes: number;
  readonly status: number;
  readonly connect: number;
  readonly read: number;
  readonly write: number;
  readonly timeout: number;
  readonly histogram: number[];
  readonly stat: string;
}

const lua = (text: string) => {
  if (text.includes(']==]')) throw new Error(`cannot quote ${JSON.stringify(text)} for wrk's Lua`);
  return `[==[${text}]==]`;
};
// A key is indexed as `[ k ]`: `[[` would open a long string.
const luaHeaders = (headers: Record<string, string>) =>
  `{${Object.entries(headers)
    .map(([k, v]) => `[ ${lua(k)} ]=${lua(v)}`)
    .join(', ')}}`;

/** The run's Lua script: one request is set once (wrk then sends pre-built bytes); a list is taken in turn. */
export function wrkScript(requests: readonly Request[], once: boolean, count: number): string {
  const lines: string[] = [];
  if (requests.length === 1 && !once) {
    const [r] = requests;
    lines.push(`wrk.path = ${lua(r!.path)}`, ...Object.entries(r!.headers).map(([k, v]) => `wrk.headers[ ${lua(k)} ] = ${lua(v)}`));
  } else {
    lines.push(
      `local list = {${requests.map((r) => `{${lua(r.path)}, ${luaHeaders(r.headers)}}`).join(',\n')}}`,
      'local built = {}',
      // wrk.format needs the Host header, which wrk sets before init runs.
      'init = function(args) for i, r in ipairs(list) do built[i] = wrk.format("GET", r[1], r[2]) end end',
      // wrk calls request() once before the run to count the requests a call returns: not a send.
      'local sent, verified = 0, false',
      'local function take() if not verified then verified = true; return built[1] end; sent = sent + 1; return nil end',
      once
        ? 'request = function() return take() or built[math.min(sent, #built)] end'
        : 'request = function() return take() or built[(sent - 1) % #built + 1] end',
    );
    if (once) {
      lines.push(
        'local answered = 0',
        `response = function() answered = answered + 1; if answered == ${count} then io.write("${DONE_MARK}\\n"); io.stdout:flush(); wrk.thread:stop() end end`,
      );
    }
  }
  lines.push(
    'done = function(summary, latency, requests)',
    '  local h = {}',
    '  for i = 1, #latency do local v, c = latency(i); h[#h + 1] = v .. "," .. c end',
    '  local f = io.open("/proc/self/stat"); local stat = f:read("*l"); f:close()',
    '  local e = summary.errors',
    `  io.write(string.format('{"requests":%d,"duration":%d,"bytes":%d,"status":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d,"histogram":[%s],"stat":"%s"}\\n',`,
    '    summary.requests, summary.duration, summary.bytes, e.status, e.connect, e.read, e.write, e.timeout, table.concat(h, ","), stat))',
    'end',
  );
  return `${lines.join('\n')}\n`;
}

/** CPU seconds (user + system) of a process, from its /proc stat line. */
export function cpuSeconds(stat: string): number {
  // Fields after the command (which may hold spaces) start at state, field 3; utime and stime are 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}
const processCpu = (pid: number) => cpuSeconds(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));

/**
 * Runs wrk (one thread, `connections` connections) against `origin` with `requests`,
 * and checks what it can see of every answer: no socket errors, and each status on
 * the expected side of 400 (wrk counts statuses over 399). Bodies are checked by the
 * caller with undici, before and after timing.
 */
export async function wrk(origin: string, requests: readonly Request[], connections: number, options: WrkOptions): Promise<WrkRun> {
  if (!WRK_BINARY) throw new Error(WRK_SKIP_REASON);
  const failing = requests.filter((r) => r.status >= 400).length;
  if (failing !== 0 && failing !== requests.length)
    throw new Error("a wrk run's requests must all succeed or all be refused: it counts statuses, not which request got which");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dqs-wrk-'));
  const script = path.join(dir, 'run.lua');
  fs.writeFileSync(script, wrkScript(requests, options.once ?? false, requests.length));
  const seconds = Math.min(MAX_RUN_SECONDS, Math.max(1, Math.round(options.seconds)));
  const serverBefore = options.serverPid === undefined ? 0 : processCpu(options.serverPid);
  const child = spawn(WRK_BINARY, ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '30s', '-s', script, origin], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let done: Done | undefined;
  let errors = '';
  child.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  createInterface({ input: child.stdout! }).on('line', (text) => {
    if (text === DONE_MARK) child.kill('SIGINT');
    else if (text.startsWith('{"requests"')) done = JSON.parse(text) as Done;
  });
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  const serverAfter = options.serverPid === undefined ? 0 : processCpu(options.serverPid);
  fs.rmSync(dir, { recursive: true, force: true });
  if (!done) throw new Error(`wrk exited with ${code} and no summary: ${errors.trim().slice(0, 300)}`);
  const wall = done.duration / 1e6;
  const problems = [
    done.connect + done.read + done.write + done.timeout > 0 &&
      `socket errors (connect ${done.connect}, read ${done.read}, write ${done.write}, timeout ${done.timeout})`,
    done.status !== (failing ? done.requests : 0) &&
      `${done.status} of ${done.requests} answers had a status over 399, where ${failing ? 'all' : 'none'} should`,
    options.once && done.requests < requests.length && `${done.requests} of ${requests.length} answers came within ${seconds} s`,
  ].filter(Boolean);
  if (problems.length) throw new Error(`wrk on ${origin}${requests[0]!.path}: ${problems.join('; ')}`);
  const latencies: number[] = [];
  for (let i = 0; i < done.histogram.length; i += 2) {
    for (let n = 0; n < done.histogram[i + 1]!; n++) latencies.push(done.histogram[i]! / 1000);
  }
  return {
    latencies,
    seconds: wall,
    bytes: done.bytes / Math.max(1, done.requests),
    clientCpu: cpuSeconds(done.stat) / wall,
    ...(options.serverPid !== undefined && { serverCpu: (serverAfter - serverBefore) / wall }),
  };
}

/** Requests/s of plain wrk (no script) on one URL: what the self-check holds the bench's own runs to. */
export async function plainWrk(url: string, connections: number, seconds: number): Promise<number> {
  if (!WRK_BINARY) throw new Error(WRK_SKIP_REASON);
  const out = execFileSync(WRK_BINARY, ['-t1', `-c${connections}`, `-d${Math.max(1, Math.round(seconds))}s`, url], {
    encoding: 'utf8',
    timeout: (MAX_RUN_SECONDS + 10) * 1000,
  });
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(out);
  if (!rps || /Socket errors|Non-2xx/.test(out)) throw new Error(`plain wrk on ${url}: ${out.trim().slice(0, 300)}`);
  return Number(rps[1]);
}
