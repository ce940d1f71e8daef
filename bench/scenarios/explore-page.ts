import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { request } from 'undici';
import { CHROMIUM, CHROMIUM_ARGS, CHROMIUM_MISSING } from '../../tools/chromium.ts';

// The Explore page as a browser meets it (docs/performance.md "Explore"): the time from
// navigation to the first drawn chart, p50 of LOADS fresh loads (no browser cache, a
// new tab each) of a chart view, and the gzipped size of the JavaScript the page loads.
// Debian's Chromium, headless; skipped with a reason where it is absent.

export const EXPLORE_SKIP_REASON = CHROMIUM_MISSING;
/** A chart view: online GGR by region and year in USD, a line per region. */
export const EXPLORE_VIEW = '/explore/aggregate?metric=ggr&group_by=region,year&fx=USD&channel=Online';
const LOADS = 10;
/** Where src/explore/web/api.ts keeps the key: set before the page's scripts run, as a user who typed it has. */
const KEY_ITEM = 'dqs-explore-key';

export interface ExploreFigures {
  /** Milliseconds from navigation start to a chart with drawn pixels, per load. */
  readonly firstChartMs: number[];
  readonly p50: number;
  /** Bytes of every script the page loads, gzipped at level 9, summed. */
  readonly scriptGzipBytes: number;
}

/** `LOADS` loads of the chart view on the server at `url` with `key`. */
export async function exploreFigures(url: string, key: string): Promise<ExploreFigures> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [...CHROMIUM_ARGS],
  });
  try {
    const firstChartMs: number[] = [];
    const scripts = new Set<string>();
    for (let i = 0; i < LOADS; i++) {
      const context = await browser.newContext();
      await context.addInitScript(([item, value]) => sessionStorage.setItem(item!, value!), [KEY_ITEM, key]);
      const page = await context.newPage();
      page.on('request', (r) => {
        if (r.resourceType() === 'script') scripts.add(r.url());
      });
      await page.goto(`${url}${EXPLORE_VIEW}`);
      // performance.now() counts from navigation start: read it the moment the canvas holds ink.
      const ms = await page.waitForFunction(
        () => {
          const canvas = document.querySelector<HTMLCanvasElement>('figure.chart canvas');
          const ctx = canvas?.getContext('2d');
          if (!canvas || !ctx || canvas.width === 0) return false;
          const { data } = ctx.getImageData(0, 0, canvas.width, canvas.height);
          for (let p = 3; p < data.length; p += 4) if (data[p]! > 0) return performance.now();
          return false;
        },
        undefined,
        { timeout: 60_000, polling: 'raf' },
      );
      firstChartMs.push((await ms.jsonValue()) as number);
      await context.close();
    }
    let scriptGzipBytes = 0;
    for (const script of scripts) {
      const res = await request(script);
      scriptGzipBytes += gzipSync(Buffer.from(await res.body.arrayBuffer()), { level: 9 }).length;
    }
    const sorted = [...firstChartMs].sort((a, b) => a - b);
    return { firstChartMs, p50: sorted[Math.floor(sorted.length / 2)]!, scriptGzipBytes };
  } finally {
    await browser.close();
  }
}

export const exploreRow = (label: string, f: ExploreFigures) =>
  `${label.padEnd(44)} first chart p50 ${f.p50.toFixed(0)} ms (${LOADS} loads: ${Math.min(...f.firstChartMs).toFixed(0)}–${Math.max(...f.firstChartMs).toFixed(0)} ms); JavaScript ${(f.scriptGzipBytes / 1024).toFixed(1)} kB gzipped`;
