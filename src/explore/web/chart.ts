import uPlot from 'uplot';
import { saveBlob } from './api.ts';
import type { ChartData } from './chart-data.ts';
import { announce, h } from './dom.ts';
import { readable } from './table.ts';

// The chart, drawn by uPlot (MIT, ~50 kB, canvas): its canvas gives the PNG. The SVG
// is drawn here from the same series, as a vector file (uPlot draws no SVG).

const COLORS = ['#1f5fa8', '#c0392b', '#1e8449', '#8e44ad', '#b9770e', '#117a8b', '#a93266', '#566573', '#7d6608', '#2e4053', '#808b96'];
const WIDTH = 860;
const COMPACT = new Intl.NumberFormat('en', { notation: 'compact', maximumSignificantDigits: 3 });
const HEIGHT = 360;

export function renderChart(into: HTMLElement, data: ChartData, title: string, fileName: string): void {
  const figure = h('figure', { class: 'chart' }, h('figcaption', {}, title));
  const plot = h('div', { role: 'img', 'aria-label': `${title}. The table below holds every value.` });
  figure.append(plot);
  const xs = data.x.map((_, i) => i);
  const years = data.kind === 'line';
  const chart = new uPlot(
    {
      width: Math.min(WIDTH, Math.max(320, into.clientWidth || WIDTH)),
      height: HEIGHT,
      legend: { show: false },
      cursor: { show: false },
      scales: { x: { time: false, range: years ? undefined : [-0.5, xs.length - 0.5] } },
      axes: [
        { values: (_u, splits) => splits.map((i) => (Number.isInteger(i) ? String(data.x[i] ?? '') : '')) },
        // Compact ticks (3.5B) fit the axis; the table has every value in full.
        { size: 64, values: (_u, splits) => splits.map((v) => COMPACT.format(v)) },
      ],
      series: [
        {},
        ...data.series.map((s, i) => ({
          label: s.label,
          stroke: COLORS[i % COLORS.length],
          width: 2,
          ...(years ? {} : { fill: COLORS[0], paths: uPlot.paths.bars!({ size: [0.7, 60] }) }),
        })),
      ],
    },
    [xs, ...data.series.map((s) => s.values.map((v) => v))] as uPlot.AlignedData,
    plot,
  );
  const legend = h('ul', { class: 'legend' });
  if (years)
    for (const [i, s] of data.series.entries())
      legend.append(h('li', {}, h('span', { class: `swatch c${i % COLORS.length}`, 'aria-hidden': 'true' }), s.label));
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
    saveBlob(new Blob([chartSvg(data, title)], { type: 'image/svg+xml' }), `${fileName}.svg`);
    announce(`Saved ${fileName}.svg`);
  });
  figure.append(legend, h('div', { class: 'actions' }, png, svg));
  into.append(figure);
}

const esc = (text: string) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

/** The same chart as an SVG document: axes' extremes labelled, one polyline per series or one rect per bar. */
export function chartSvg(data: ChartData, title: string): string {
  const [left, right, top, bottom] = [90, 20, 30, 40];
  const legendHeight = data.kind === 'line' ? 18 * data.series.length : 0;
  const w = WIDTH;
  const hgt = HEIGHT + legendHeight;
  const all = data.series.flatMap((s) => s.values.filter((v): v is number => v !== null));
  const lo = Math.min(0, ...all);
  const hi = Math.max(0, ...all) || 1;
  const n = data.x.length;
  const x = (i: number) =>
    left + ((i + (data.kind === 'bar' ? 0.5 : 0)) / Math.max(1, data.kind === 'bar' ? n : n - 1)) * (w - left - right);
  const y = (v: number) => top + (1 - (v - lo) / (hi - lo)) * (HEIGHT - top - bottom);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${hgt}" viewBox="0 0 ${w} ${hgt}" font-family="sans-serif" font-size="12">`,
    `<title>${esc(title)}</title><rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="${left}" y="18" font-weight="bold">${esc(title)}</text>`,
    `<line x1="${left}" x2="${w - right}" y1="${y(0)}" y2="${y(0)}" stroke="#888"/>`,
    `<text x="${left - 6}" y="${y(hi) + 4}" text-anchor="end">${esc(readable(hi))}</text>`,
    `<text x="${left - 6}" y="${y(lo) + 4}" text-anchor="end">${esc(readable(lo))}</text>`,
    `<text x="${x(0)}" y="${HEIGHT - 16}" text-anchor="middle">${esc(String(data.x[0] ?? ''))}</text>`,
    `<text x="${x(n - 1)}" y="${HEIGHT - 16}" text-anchor="middle">${esc(String(data.x[n - 1] ?? ''))}</text>`,
  ];
  data.series.forEach((s, k) => {
    const color = COLORS[k % COLORS.length];
    if (data.kind === 'bar') {
      const band = ((w - left - right) / Math.max(1, n)) * 0.7;
      s.values.forEach((v, i) => {
        if (v === null) return;
        parts.push(
          `<rect x="${x(i) - band / 2}" y="${Math.min(y(v), y(0))}" width="${band}" height="${Math.abs(y(v) - y(0))}" fill="${color}"><title>${esc(`${data.x[i]}: ${v}`)}</title></rect>`,
        );
      });
      return;
    }
    const points = s.values.flatMap((v, i) => (v === null ? [] : [`${x(i).toFixed(1)},${y(v).toFixed(1)}`]));
    parts.push(
      `<polyline fill="none" stroke="${color}" stroke-width="2" points="${points.join(' ')}"><title>${esc(s.label)}</title></polyline>`,
    );
    parts.push(`<text x="${left}" y="${HEIGHT + 14 + 18 * k}" fill="${color}">■ ${esc(s.label)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n');
}
