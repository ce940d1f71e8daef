import uPlot from 'uplot';
import { saveBlob } from './api.ts';
import type { ChartData } from './chart-data.ts';
import { announce, h } from './dom.ts';
import { FORECAST, yearSpan } from './forecast.ts';
import { readable } from './table.ts';

// The chart, drawn by uPlot (MIT, ~50 kB, canvas): its canvas gives the PNG. The SVG
// is drawn here from the same series, as a vector file (uPlot draws no SVG).

const COLORS = ['#1f5fa8', '#c0392b', '#1e8449', '#8e44ad', '#b9770e', '#117a8b', '#a93266', '#566573', '#7d6608', '#2e4053', '#808b96'];
const WIDTH = 860;
const COMPACT = new Intl.NumberFormat('en', { notation: 'compact', maximumSignificantDigits: 3 });
const PERCENT = new Intl.NumberFormat('en', { style: 'percent', maximumSignificantDigits: 3 });
const HEIGHT = 360;
/** The ground behind forecast years; opaque, so a test can find its pixels. */
const SHADE = '#eceff3';
const DASH = [6, 4];
/** Characters a bar's label keeps before it is cut with an ellipsis; the table and the SVG's titles hold it whole. */
const LABEL_CHARS = 14;

/** The id of the table a chart is drawn from (query-view.ts). */
export const TABLE_ID = 'answer';

/** The chart in one sentence: what it draws, how many lines or bars, over which years or with which largest bar. */
export function chartSummary(data: ChartData, title: string, percent: boolean): string {
  const value = (v: number) => (percent ? PERCENT.format(v) : readable(v));
  const n = data.series.length;
  if (data.kind === 'line') {
    const named = data.series.slice(0, 3).map((s) => s.label);
    const more = n > named.length ? `, and ${n - named.length} more` : '';
    const years = data.x.length ? `, ${data.x[0]} to ${data.x.at(-1)}` : '';
    return `${title}: ${n} ${n === 1 ? 'line' : 'lines'} (${named.join(', ')}${more})${years}.`;
  }
  const values = data.series[0]?.values ?? [];
  const top = values.reduce<number>((best, v, i) => (v !== null && (best < 0 || v > values[best]!) ? i : best), -1);
  const highest = top < 0 ? '' : `; the highest is ${data.x[top]}, ${value(values[top]!)}`;
  return `${title}: ${data.x.length} ${data.x.length === 1 ? 'bar' : 'bars'}, one per group${highest}.`;
}

export interface ChartOptions {
  /** The measure, what it is drawn by, and its currency or unit. */
  readonly title: string;
  readonly fileName: string;
  /** The measure is a fraction (the catalog's `derived` says so): axes and titles show it as a percentage. */
  readonly percent: boolean;
}

/** A label cut to `chars` with an ellipsis. */
export const cut = (label: string, chars = LABEL_CHARS) => (label.length > chars ? `${label.slice(0, chars - 1)}…` : label);

/** The y range a bar chart is drawn on: always from zero, so a bar's length is its value. */
export function barRange(values: readonly (number | null)[]): [number, number] {
  const held = values.filter((v): v is number => v !== null);
  const lo = Math.min(0, ...held);
  const hi = Math.max(0, ...held);
  const pad = (hi - lo || 1) * 0.05;
  return [lo < 0 ? lo - pad : 0, hi > 0 ? hi + pad : lo < 0 ? 0 : 1];
}

export function renderChart(into: HTMLElement, data: ChartData, options: ChartOptions): void {
  const { title, fileName, percent } = options;
  const tick = (v: number) => (percent ? PERCENT.format(v) : COMPACT.format(v));
  const summary = chartSummary(data, title, percent);
  // Its text alternative: the caption says what it shows, and links the table it was drawn from (query-view.ts).
  const figure = h(
    'figure',
    { class: 'chart' },
    h(
      'figcaption',
      {},
      h('span', { class: 'chart-title' }, title),
      ' ',
      h('span', { class: 'chart-summary' }, summary),
      ' ',
      h('a', { href: `#${TABLE_ID}` }, 'Data: the table below'),
    ),
  );
  const plot = h('div', { role: 'img', 'aria-label': summary, 'aria-details': TABLE_ID });
  figure.append(plot);
  const xs = data.x.map((_, i) => i);
  const years = data.kind === 'line';
  const width = Math.min(WIDTH, Math.max(320, into.clientWidth || WIDTH));
  // A bar's label is cut to its band's width, and only every k-th shown, so none overlap.
  const firstForecast = years ? data.forecast.indexOf(true) : -1;
  const every = years ? 1 : Math.max(1, Math.ceil((data.x.length * LABEL_CHARS * 7) / (width - 80)));
  const chart = new uPlot(
    {
      width,
      height: HEIGHT,
      legend: { show: false },
      cursor: { show: false },
      // Forecast years stand on a shaded ground, from halfway past the last actual year.
      hooks:
        firstForecast < 0
          ? {}
          : {
              drawClear: [
                (u) => {
                  const from = Math.max(u.bbox.left, u.valToPos(firstForecast - 0.5, 'x', true));
                  u.ctx.fillStyle = SHADE;
                  u.ctx.fillRect(from, u.bbox.top, u.bbox.left + u.bbox.width - from, u.bbox.height);
                },
              ],
            },
      scales: {
        x: { time: false, range: years ? undefined : [-0.5, xs.length - 0.5] },
        ...(years ? {} : { y: { range: () => barRange(data.series.flatMap((s) => s.values)) } }),
      },
      axes: [
        {
          values: (_u, splits) =>
            splits.map((i) =>
              Number.isInteger(i) && i % every === 0 ? (years ? String(data.x[i] ?? '') : cut(String(data.x[i] ?? ''))) : '',
            ),
        },
        // Compact ticks (3.5B) fit the axis; the table has every value in full.
        { size: 64, values: (_u, splits) => splits.map(tick) },
      ],
      series: [
        {},
        ...data.series.map((s, i) => ({
          label: s.label,
          stroke: COLORS[i % COLORS.length],
          width: 2,
          ...(years ? {} : { fill: COLORS[0], paths: uPlot.paths.bars!({ size: [0.7, 60] }), points: { show: false } }),
        })),
        ...(firstForecast < 0
          ? []
          : data.series.map((s, i) => ({ label: `${s.label}, forecast`, stroke: COLORS[i % COLORS.length], width: 2, dash: DASH }))),
      ],
    },
    [
      xs,
      ...data.series.map((s) => (firstForecast < 0 ? s.values : actual(data, s.values))),
      ...(firstForecast < 0 ? [] : data.series.map((s) => projected(data, s.values))),
    ] as uPlot.AlignedData,
    plot,
  );
  const legend = h('ul', { class: 'legend' });
  if (years)
    for (const [i, s] of data.series.entries())
      legend.append(h('li', {}, h('span', { class: `swatch c${i % COLORS.length}`, 'aria-hidden': 'true' }), s.label));
  if (firstForecast >= 0)
    legend.append(h('li', { class: 'forecast' }, h('span', { class: 'swatch forecast', 'aria-hidden': 'true' }), forecastLabel(data)));
  const png = h('button', { type: 'button' }, 'Download PNG');
  png.addEventListener('click', () =>
    chart.ctx.canvas.toBlob((blob) => {
      if (!blob) return announce('The PNG could not be made.');
      saveBlob(blob, `${fileName}.png`);
      announce(`Saved ${fileName}.png`);
    }, 'image/png'),
  );
  const svg = h('button', { type: 'button' }, 'Download SVG');
  svg.addEventListener('click', () => {
    saveBlob(new Blob([chartSvg(data, options)], { type: 'image/svg+xml' }), `${fileName}.svg`);
    announce(`Saved ${fileName}.svg`);
  });
  figure.append(legend, h('div', { class: 'actions' }, png, svg));
  into.append(figure);
}

/** A line's actual years: its forecast years left out. */
const actual = (data: ChartData, values: readonly (number | null)[]) => values.map((v, i) => (data.forecast[i] ? null : v));
/** A line's forecast years, and the actual year before them, so the dashed part joins the solid one. */
const projected = (data: ChartData, values: readonly (number | null)[]) =>
  values.map((v, i) => (data.forecast[i] || data.forecast[i + 1] ? v : null));
const forecastLabel = (data: ChartData) =>
  `Forecast (temporal=${FORECAST}): ${yearSpan(data.x.filter((_, i) => data.forecast[i]) as number[])}, dashed on a shaded ground`;

const esc = (text: string) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The same chart as an SVG document: axes' extremes labelled, one polyline per series or
 * one rect per bar, each bar's label cut and whole in its title, as is its value.
 */
export function chartSvg(data: ChartData, options: Pick<ChartOptions, 'title' | 'percent'>): string {
  const { title, percent } = options;
  const format = (v: number) => (percent ? PERCENT.format(v) : readable(v));
  const [left, right, top, bottom] = [90, 20, 30, 40];
  const marked = data.kind === 'line' && data.forecast.includes(true);
  const legendHeight = data.kind === 'line' ? 18 * (data.series.length + (marked ? 1 : 0)) : 0;
  const w = WIDTH;
  const hgt = HEIGHT + legendHeight;
  const all = data.series.flatMap((s) => s.values.filter((v): v is number => v !== null));
  const lo = Math.min(0, ...all);
  const hi = Math.max(0, ...all) || 1;
  const n = data.x.length;
  const x = (i: number) =>
    left + ((i + (data.kind === 'bar' ? 0.5 : 0)) / Math.max(1, data.kind === 'bar' ? n : n - 1)) * (w - left - right);
  const y = (v: number) => top + (1 - (v - lo) / (hi - lo)) * (HEIGHT - top - bottom);
  const label = (i: number) => String(data.x[i] ?? '');
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${hgt}" viewBox="0 0 ${w} ${hgt}" font-family="sans-serif" font-size="12">`,
    `<title>${esc(title)}</title><rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="${left}" y="18" font-weight="bold">${esc(title)}</text>`,
    `<line x1="${left}" x2="${w - right}" y1="${y(0)}" y2="${y(0)}" stroke="#888"/>`,
    `<text x="${left - 6}" y="${y(hi) + 4}" text-anchor="end">${esc(format(hi))}</text>`,
    `<text x="${left - 6}" y="${y(lo) + 4}" text-anchor="end">${esc(format(lo))}</text>`,
  ];
  const firstForecast = data.kind === 'line' ? data.forecast.indexOf(true) : -1;
  if (firstForecast >= 0) {
    const from = firstForecast === 0 ? left : (x(firstForecast - 1) + x(firstForecast)) / 2;
    parts.splice(
      2,
      0,
      `<rect x="${from}" y="${top}" width="${w - right - from}" height="${HEIGHT - top - bottom}" fill="${SHADE}"><title>${esc(forecastLabel(data))}</title></rect>`,
    );
  }
  if (data.kind === 'line')
    parts.push(
      `<text x="${x(0)}" y="${HEIGHT - 16}" text-anchor="middle">${esc(label(0))}</text>`,
      `<text x="${x(n - 1)}" y="${HEIGHT - 16}" text-anchor="middle">${esc(label(n - 1))}</text>`,
    );
  else {
    const chars = Math.max(3, Math.floor((w - left - right) / Math.max(1, n) / 7));
    for (let i = 0; i < n; i++)
      parts.push(
        `<text x="${x(i)}" y="${HEIGHT - 16}" text-anchor="middle"><title>${esc(label(i))}</title>${esc(cut(label(i), chars))}</text>`,
      );
  }
  data.series.forEach((s, k) => {
    const color = COLORS[k % COLORS.length];
    if (data.kind === 'bar') {
      const band = ((w - left - right) / Math.max(1, n)) * 0.7;
      s.values.forEach((v, i) => {
        if (v === null) return;
        parts.push(
          `<rect x="${x(i) - band / 2}" y="${Math.min(y(v), y(0))}" width="${band}" height="${Math.abs(y(v) - y(0))}" fill="${color}"><title>${esc(`${data.x[i]}: ${format(v)}`)}</title></rect>`,
        );
      });
      return;
    }
    const line = (values: readonly (number | null)[], dash: string) => {
      const points = values.flatMap((v, i) => (v === null ? [] : [`${x(i).toFixed(1)},${y(v).toFixed(1)}`]));
      if (points.length)
        parts.push(
          `<polyline fill="none" stroke="${color}" stroke-width="2"${dash} points="${points.join(' ')}"><title>${esc(s.label)}</title></polyline>`,
        );
    };
    if (firstForecast < 0) line(s.values, '');
    else {
      line(actual(data, s.values), '');
      line(projected(data, s.values), ` stroke-dasharray="${DASH.join(' ')}"`);
    }
    parts.push(`<text x="${left}" y="${HEIGHT + 14 + 18 * k}" fill="${color}">■ ${esc(s.label)}</text>`);
  });
  if (marked) parts.push(`<text x="${left}" y="${HEIGHT + 14 + 18 * data.series.length}" fill="#333">▨ ${esc(forecastLabel(data))}</text>`);
  parts.push('</svg>');
  return parts.join('\n');
}
