import type Router from '@koa/router';
import type { Context } from 'koa';
import { NotFoundError } from '../errors/index.ts';
import type { Services } from '../services.ts';
import { loadBundle } from './assets.ts';
import type { Asset, Bundle } from './bundle.ts';
import { explorePage } from './html.ts';
import { ENDPOINTS } from './views.ts';

// GET /explore and /explore/<view>: the Explore page (issue 43), a single-page app
// over the public /v1 API. Outside /v1, so the page and its files need no key; the
// page's own requests send the key the user typed, as any client does.

/** The page's paths: the catalog's, and one per view, each a route of its own. */
const PAGES = ['/explore', ...ENDPOINTS.map((view) => `/explore/${view}`)];

/**
 * Only this origin, and nothing inline: the page's data calls go to /v1 here
 * (connect-src), the chart and downloads are made in the page (blob: images).
 */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Registers the page's paths and its hashed files (/explore/assets/<file>) on the public router. */
export function registerExplore(router: Router, services: Pick<Services, 'log'>): void {
  // Bundled once, on the first request that needs it: a server never asked for the page never bundles it.
  let bundle: Promise<Bundle> | undefined;
  const assets = () => {
    bundle ??= loadBundle().catch((err) => {
      bundle = undefined;
      services.log.error({ err }, 'explore: the page could not be bundled');
      throw err;
    });
    return bundle;
  };
  for (const path of PAGES) {
    router.get(path, async (ctx) => {
      const { script, style } = await assets();
      page(ctx, explorePage(script, style));
    });
  }
  router.get('/explore/assets/:file', async (ctx) => {
    const found = (await assets()).files.get(ctx.params.file!);
    if (!found) throw new NotFoundError();
    serveAsset(ctx, found);
  });
}

function page(ctx: Context, html: string): void {
  // no-cache: the HTML names the current hashed files, so a browser revalidates it and
  // then keeps those files for good.
  ctx.set({ 'Cache-Control': 'no-cache', 'Content-Security-Policy': CSP, 'Referrer-Policy': 'no-referrer' });
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = html;
}

/** A hashed name changes with its content, so the file at it never does. */
function serveAsset(ctx: Context, asset: Asset): void {
  ctx.set({ 'Cache-Control': 'public, max-age=31536000, immutable', 'Content-Security-Policy': CSP });
  ctx.type = asset.type;
  ctx.body = Buffer.from(asset.body);
}
