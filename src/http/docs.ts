import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type Router from '@koa/router';
import type { Services } from '../services.ts';
import { openApiDocument } from './openapi.ts';
import { respondCacheable } from './cacheable.ts';
import { createHash } from 'node:crypto';

// GET /openapi.json and GET /docs (no key): the OpenAPI document, and Swagger UI
// rendering it, served from node_modules so the page loads nothing from elsewhere,
// and GET /docs/changelog: CHANGELOG.md, which the document's description links.

const require = createRequire(import.meta.url);
const { version } = require('../../package.json') as { version: string };

/** The document as served and as committed in docs/openapi.json (two-space indent, final newline). */
export const openApiText = `${JSON.stringify(openApiDocument(version), null, 2)}\n`;

const swaggerDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const asset = (file: string) => fs.readFileSync(path.join(swaggerDir, file));

// Only this origin: scripts, styles and the document all come from here, and the
// page's own script is a file, not inline. Swagger UI draws a few icons as data: SVGs.
const CSP = "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'";

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>data-query-service API reference</title>
<link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
<link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

const INIT = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true, validatorUrl: null, defaultModelsExpandDepth: 0 });\n`;

const FILES: Record<string, { type: string; body: Buffer }> = {
  '/docs': { type: 'text/html; charset=utf-8', body: Buffer.from(PAGE) },
  '/docs/init.js': { type: 'text/javascript; charset=utf-8', body: Buffer.from(INIT) },
  '/docs/swagger-ui.css': { type: 'text/css; charset=utf-8', body: asset('swagger-ui.css') },
  '/docs/favicon-32x32.png': { type: 'image/png', body: asset('favicon-32x32.png') },
  '/docs/swagger-ui-bundle.js': { type: 'text/javascript; charset=utf-8', body: asset('swagger-ui-bundle.js') },
  '/openapi.json': { type: 'application/json; charset=utf-8', body: Buffer.from(openApiText) },
  '/docs/changelog': { type: 'text/markdown; charset=utf-8', body: fs.readFileSync(path.resolve(import.meta.dirname, '../../CHANGELOG.md')) },
};

export function register(router: Router, services: Services): void {
  for (const [route, { type, body }] of Object.entries(FILES)) {
    // Content-addressed, as the catalog: the key (hence ETag) is the body's hash.
    const key = `static ${createHash('sha256').update(body).digest('base64url')}`;
    router.get(route, async (ctx) => {
      ctx.set('Content-Security-Policy', CSP);
      ctx.set('X-Content-Type-Options', 'nosniff');
      await respondCacheable(ctx, services, { key, contentType: type, render: async () => ({ body }) });
    });
  }
}
