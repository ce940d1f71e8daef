import fs from 'node:fs';
import path from 'node:path';

// Reads a V8 .cpuprofile (what `node --cpu-prof` writes) and ranks functions by self
// time: the time sampled with that function on top of the stack. `(idle)` and
// `(program)` are kept, so a server waiting on its client shows as idle.

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
}

interface CpuProfile {
  /** µs on the monotonic clock, as process.hrtime's: samples can be matched to a window the bench timed. */
  readonly startTime: number;
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface TopFunction {
  /** `name (file:line)`, the file relative to the checkout when it is one of ours. */
  readonly name: string;
  readonly selfMs: number;
  /** Share of all sampled time. */
  readonly share: number;
}

/** Monotonic µs (process.hrtime.bigint() / 1000n): only samples inside count. */
export interface Window {
  readonly fromUs: number;
  readonly toUs: number;
}

export function topFunctions(file: string, root: string, count = 15, window?: Window): TopFunction[] {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const self = new Map<string, number>();
  let total = 0;
  // A sample's time is the delta to the next sample (V8's own convention in DevTools).
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i]!;
    if (window && (at < window.fromUs || at > window.toUs)) continue;
    const delta = profile.timeDeltas[i + 1] ?? 0;
    const frame = frames.get(profile.samples[i]!)!;
    const where = frame.url ? ` (${shortUrl(frame.url, root)}:${frame.lineNumber + 1})` : '';
    const name = `${frame.functionName || '(anonymous)'}${where}`;
    self.set(name, (self.get(name) ?? 0) + delta);
    total += delta;
  }
  return [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, us]) => ({ name, selfMs: us / 1000, share: us / (total || 1) }));
}

function shortUrl(url: string, root: string): string {
  const file = url.startsWith('file://') ? new URL(url).pathname : url;
  return file.startsWith(root) ? path.relative(root, file) : file.replace(/^.*\/node_modules\//, '');
}

export const formatTop = (top: readonly TopFunction[]) =>
  top.map((t) => `${(t.share * 100).toFixed(1).padStart(5)}%  ${t.selfMs.toFixed(0).padStart(7)} ms  ${t.name}`).join('\n');
