import { CANCEL_HEADER, cancelRow } from '../scenarios/cancel.ts';
import { exploreRow } from '../scenarios/explore-page.ts';
import { HISTORY_HEADER, historyRows } from '../scenarios/history.ts';
import { WHOLE_DIFF_HEADER, wholeDiffRow } from '../scenarios/whole-diff.ts';
import type { Figure } from './measure.ts';
import type { Result, Target } from './result.ts';
import type { SweepEntry } from './sweep.ts';

// The terminal side of the suite: a progress line and a table row per figure as it
// is measured (stderr), and the targets at the end (stdout).

const tty = process.stderr.isTTY;
let progressShown = false;

/**
 * One line of progress; on a terminal it is overwritten by the next one. Off a
 * terminal (a log file, CI) only steps are printed, not each run within a step.
 */
export function progress(text: string, step = true): void {
  if (tty) {
    process.stderr.write(`\r\x1b[2K${text.slice(0, (process.stderr.columns ?? 120) - 1)}`);
    progressShown = true;
  } else if (step) {
    process.stderr.write(`  … ${text}\n`);
  }
}

/** A finished line (a table row, a heading) above the progress line. */
export function line(text: string): void {
  if (progressShown) process.stderr.write('\r\x1b[2K');
  progressShown = false;
  process.stderr.write(`${text}\n`);
}

const ms = (x: number) => (x < 10 ? x.toFixed(2) : x.toFixed(1));
const ratio = (x: number | undefined) => (x === undefined ? '' : `${x < 10 ? x.toFixed(2) : x.toFixed(1)}×`);

export const TABLE_HEADER = [
  `${'figure'.padEnd(44)} ${'conn'.padStart(4)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'req/s'.padStart(6)} ${'bytes'.padStart(8)} │ ${'ceilings (p50 at 1 conn, req/s at 16) and service ÷ ceiling'.padEnd(58)} │ noise │ wrk cpu`,
  `${'─'.repeat(83)}┼${'─'.repeat(60)}┼───────┼────────`,
];

export function figureRow(f: Figure): string {
  const s = f.service;
  const ceilings = Object.entries(f.ceilings)
    .map(([name, c]) => `${name} ${f.by === 'p50' ? `${ms(c.p50)} ms` : `${c.rps.toFixed(0)}/s`} ${ratio(f.ratios[name])}`)
    .join(', ');
  return `${f.title.slice(0, 44).padEnd(44)} ${String(f.connections).padStart(4)} ${ms(s.p50).padStart(7)} ${ms(s.p99).padStart(7)} ${s.rps.toFixed(0).padStart(6)} ${Math.round(s.bytes).toLocaleString('en').padStart(8)} │ ${ceilings.padEnd(58)} │ ${(f.noise[f.by] * 100).toFixed(0).padStart(3)}%  │ ${s.clientCpu === undefined ? '' : `${(s.clientCpu * 100).toFixed(0).padStart(3)}%`}`;
}

/** Server CPU time a request (seconds), from a run's CPU share and rate; undefined where the CPU was not read. */
const cpuPerRequest = (s: { serverCpu?: number; rps: number }) => (s.serverCpu === undefined ? undefined : s.serverCpu / s.rps);

/**
 * What counting each answer in its key's usage adds to a request's server CPU: the
 * counting server's CPU a request over one started with BENCH_DISABLE_USAGE, beside
 * what a second such server differs by in the same rounds, the figure's noise
 * (bench/scenarios/usage-counting.ts; docs/performance.md "Usage counting"; the target
 * is at most 5%).
 */
export function usageCost(f: Figure): string {
  const [counted, uncounted, again] = [f.service, f.ceilings.uncounted!, f.ceilings.again!].map(cpuPerRequest);
  if (counted === undefined || uncounted === undefined || again === undefined) return `${f.title} @${f.connections}: server CPU not read`;
  const us = (seconds: number) => `${(seconds * 1e6).toFixed(1)} µs`;
  const pct = (ratio: number) => `${ratio >= 1 ? '+' : ''}${((ratio - 1) * 100).toFixed(1)}%`;
  return `usage counting, ${f.title.replace(/, usage counted vs not$/, '')} @${f.connections}: server CPU a request ${us(counted)} counted, ${us(uncounted)} not: ${pct(counted / uncounted)} (target ≤ 5%); a second server not counting: ${us(again)}, ${pct(again / uncounted)} (the noise)`;
}

export function sweepRow(e: SweepEntry, reference: SweepEntry | undefined): string {
  const vs = reference ? ` (${(e.page.p50 / reference.page.p50).toFixed(2)}× 1x)` : '';
  return `${`${e.scale}x`.padStart(4)} ${e.rows.toLocaleString('en').padStart(11)} ggr rows  page p50 ${ms(e.page.p50)} ms${vs}, p99 ${ms(e.page.p99)} ms  load ${e.loadSeconds.toFixed(1)} s  peak while loading ${e.loadPeakMB} MB  steady RSS ${e.steadyRssMB} MB`;
}

const targetValue = (t: Target) => (t.value === null ? '' : t.id === 'x16-rss' ? `${t.value} MB` : `${t.value.toFixed(2)}`);

export function targetLines(targets: readonly Target[]): string[] {
  return targets.map((t) => {
    const verdict = t.met === null ? 'SKIPPED' : t.met ? 'met' : 'MISSED';
    const detail =
      t.met === null
        ? ` (${t.skipped})`
        : ` (${targetValue(t)}${t.tolerance !== undefined ? `, tolerance ${(t.tolerance * 100).toFixed(0)}%` : ''})`;
    return `  ${verdict.padEnd(7)} ${t.text}${detail}`;
  });
}

/** The whole table, each scenario's two figures together, then the sweep and the targets. */
export function summary(result: Result, file: string): string {
  const missed = result.targets.filter((t) => t.met === false).length;
  const order = [...new Set(result.figures.map((f) => f.scenario))];
  const figures = [...result.figures].sort(
    (a, b) => order.indexOf(a.scenario) - order.indexOf(b.scenario) || a.connections - b.connections,
  );
  const entries = 'entries' in result.sweep ? result.sweep.entries : [];
  return [
    ...TABLE_HEADER,
    ...figures.map(figureRow),
    ...(entries.length ? ['', 'Scale sweep (cache off, 1 client):', ...entries.map((e) => sweepRow(e, entries[0]))] : []),
    ...(result.cancel ? ['', CANCEL_HEADER, ...result.cancel.map(cancelRow)] : []),
    ...(result.wholeDiff ? ['', WHOLE_DIFF_HEADER, ...result.wholeDiff.map((f) => wholeDiffRow(f, result.wholeDiff!))] : []),
    ...(result.history ? ['', HISTORY_HEADER, ...historyRows(result.history)] : []),
    ...(result.explore?.x1 ? ['', exploreRow('Explore page, 1× release', result.explore.x1)] : []),
    ...(result.explore?.x16 ? [exploreRow('Explore page, 16× release', result.explore.x16)] : []),
    '',
    `Targets (${result.mode} run, ${result.durationSeconds.toFixed(0)} s, commit ${result.commit}${result.dirty ? ' with uncommitted changes' : ''}):`,
    ...targetLines(result.targets),
    '',
    `${missed} target${missed === 1 ? '' : 's'} missed; result written to ${file}`,
  ].join('\n');
}
