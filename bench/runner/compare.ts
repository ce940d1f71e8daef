import { NOISE_FLOOR, type Result } from './result.ts';

// `npm run bench -- --compare A.json B.json`: the change from run A to run B of every
// figure both hold, judged by its ratio to the ceiling timed beside it in the same
// rounds (bare where there is one; p50 for one client, req/s for 16 connections): a
// busy machine slows the service and its ceiling alike, so the ratio holds where the
// absolute figure does not. The scale sweep has no ceiling and is compared by its
// page p50. A change is flagged only beyond the noise both runs saw (the spread of
// the ratio between the halves of the rounds) and never below NOISE_FLOOR.

export interface Change {
  readonly id: string;
  readonly title: string;
  readonly by: 'p50' | 'rps';
  /** What a and b are ratios to; absent: absolute figures. */
  readonly ceiling?: string;
  readonly a: number;
  readonly b: number;
  /** B ÷ A − 1. */
  readonly change: number;
  readonly threshold: number;
  readonly verdict: 'regression' | 'improvement' | 'noise';
}

interface Comparable {
  readonly id: string;
  readonly title: string;
  readonly by: 'p50' | 'rps';
  /** The ceiling the value is a ratio to; absent: an absolute figure. */
  readonly ceiling?: string;
  readonly value: number;
  readonly noise: number;
}

function comparables(result: Result): Map<string, Comparable> {
  const out = new Map<string, Comparable>();
  for (const f of result.figures) {
    if (!f.judgedBy) out.set(f.id, { id: f.id, title: f.title, by: f.by, value: f.service[f.by], noise: f.noise[f.by] });
    else out.set(f.id, { id: f.id, title: f.title, by: f.by, ceiling: f.judgedBy, value: f.ratios[f.judgedBy]!, noise: f.ratioNoise });
  }
  if ('entries' in result.sweep) {
    for (const e of result.sweep.entries) {
      out.set(`sweep-x${e.scale}@1`, {
        id: `sweep-x${e.scale}@1`,
        title: `scale sweep: ${e.scale}x release, uncached page`,
        by: 'p50',
        value: e.page.p50,
        noise: e.noise,
      });
    }
  }
  return out;
}

export function compareResults(a: Result, b: Result): { changes: Change[]; onlyInOne: string[]; warnings: string[] } {
  const before = comparables(a);
  const after = comparables(b);
  const changes: Change[] = [];
  for (const [id, x] of before) {
    const y = after.get(id);
    if (!y) continue;
    const change = y.value / x.value - 1;
    const threshold = Math.max(NOISE_FLOOR, x.noise, y.noise);
    // Lower is better for p50, higher for req/s.
    const worse = x.by === 'p50' ? change : -change;
    // A figure judged by a ratio in one run and absolutely in the other (a run before ratios were kept) is not compared.
    if (x.ceiling !== y.ceiling) continue;
    changes.push({
      id,
      title: x.title,
      by: x.by,
      ...(x.ceiling && { ceiling: x.ceiling }),
      a: x.value,
      b: y.value,
      change,
      threshold,
      verdict: worse > threshold ? 'regression' : worse < -threshold ? 'improvement' : 'noise',
    });
  }
  const onlyInOne = [...before.keys(), ...after.keys()].filter((id) => !before.has(id) || !after.has(id));
  const warnings: string[] = [];
  if (a.mode !== b.mode) warnings.push(`modes differ (${a.mode} vs ${b.mode}): fewer requests make noisier figures`);
  if (a.machine.model !== b.machine.model || a.machine.cpus !== b.machine.cpus)
    warnings.push(`machines differ (${a.machine.cpus}× ${a.machine.model} vs ${b.machine.cpus}× ${b.machine.model})`);
  return { changes, onlyInOne, warnings };
}

export function formatComparison(a: Result, b: Result, { changes, onlyInOne, warnings }: ReturnType<typeof compareResults>): string {
  const lines = [
    `A: ${a.date} ${a.commit}${a.dirty ? '+dirty' : ''} ${a.mode}`,
    `B: ${b.date} ${b.commit}${b.dirty ? '+dirty' : ''} ${b.mode}`,
    ...warnings.map((w) => `warning: ${w}`),
    '',
    `${'figure'.padEnd(64)} ${'measure'.padEnd(10)} ${'A'.padStart(9)} ${'B'.padStart(9)} ${'change'.padStart(8)} ${'noise'.padStart(6)}  verdict`,
  ];
  const unit = (c: Change, x: number) => (c.ceiling ? `${x.toFixed(3)}×` : c.by === 'p50' ? `${x.toFixed(2)}ms` : `${x.toFixed(0)}/s`);
  for (const c of changes) {
    const mark = c.verdict === 'regression' ? 'REGRESSION' : c.verdict === 'improvement' ? 'better' : '';
    lines.push(
      `${`${c.title} [${c.id}]`.slice(0, 64).padEnd(64)} ${(c.ceiling ? `${c.by}÷${c.ceiling}` : c.by).padEnd(10)} ${unit(c, c.a).padStart(9)} ${unit(c, c.b).padStart(9)} ${`${c.change >= 0 ? '+' : ''}${(c.change * 100).toFixed(1)}%`.padStart(8)} ${`±${(c.threshold * 100).toFixed(0)}%`.padStart(6)}  ${mark}`,
    );
  }
  if (onlyInOne.length) lines.push('', `in one run only: ${onlyInOne.join(', ')}`);
  const regressions = changes.filter((c) => c.verdict === 'regression').length;
  lines.push('', `${regressions} regression${regressions === 1 ? '' : 's'} beyond noise out of ${changes.length} figures`);
  return lines.join('\n');
}
