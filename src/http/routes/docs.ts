import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { firstPublished } from '../../releases/publication-log.ts';
import type { Services } from '../../services.ts';
import { exampleRequest } from '../openapi/examples.ts';
import { DOCUMENTED_RELEASES, type ReleaseExamples } from '../openapi/prefill.ts';
import { edgeErrors } from '../openapi/responses.ts';
import { respondCacheable } from '../respond/cacheable.ts';
import type { Json, Route } from './route.ts';

// GET /openapi.json and GET /docs (no key): the OpenAPI document, and Swagger UI
// rendering it, served from node_modules so the page loads nothing from elsewhere,
// and GET /docs/changelog: CHANGELOG.md, which the document's description links.

const require = createRequire(import.meta.url);
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
<div class="swagger-ui"><section id="clients" class="wrapper" aria-labelledby="clients-title">
<h2 id="clients-title">Install a client from this server</h2>
<ul id="client-installs"></ul>
</section></div>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

// The install lines come from the front door, which names this server as the request reached it.
const INIT = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true, validatorUrl: null, defaultModelsExpandDepth: 0 });
fetch('/').then((res) => res.json()).then(({ clients }) => {
  for (const [language, { install }] of Object.entries(clients)) {
    const item = document.createElement('li');
    const code = document.createElement('code');
    code.textContent = install;
    item.append(language + ': ', code);
    document.getElementById('client-installs').append(item);
  }
});
`;

const documentation = (
  path: string,
  operationId: string,
  summary: string,
  description: string,
  type: string,
  body: string,
  schema: Json = { type: 'string' },
): Json => ({
  operationId,
  tags: ['documentation'],
  summary,
  description,
  security: [],
  'x-codeSamples': exampleRequest(path, false),
  responses: { 200: { description: body, content: { [type]: { schema } } }, ...edgeErrors() },
});

/** A file served as it is, with a strict CSP; its cache key (hence ETag) is its content's hash. */
function file(route: string, type: string, content: () => Buffer, operation?: Json): Route {
  let made: { body: Buffer; key: string } | undefined;
  return {
    path: route,
    operation,
    async handle(ctx, services) {
      if (!made) {
        const body = content();
        made = { body, key: `static ${createHash('sha256').update(body).digest('base64url')}` };
      }
      const { body, key } = made;
      ctx.set('Content-Security-Policy', CSP);
      ctx.set('X-Content-Type-Options', 'nosniff');
      await respondCacheable(ctx, services, { key, contentType: type, render: async () => ({ body }) });
    },
  };
}

/** The releases this server's document names: its two newest published (the documented ones until one is published). */
function servedReleases(services: Services): ReleaseExamples {
  const [latest, previous = latest] = services.releases.list();
  if (latest === undefined) return DOCUMENTED_RELEASES;
  const published = firstPublished(services.releases.publications());
  const at = (id: string) => published.get(id) ?? services.releases.manifest(id)!.created_at;
  return { latest, previous: previous!, latestAt: at(latest), previousAt: at(previous!) };
}

/**
 * GET /openapi.json: the document naming this server's releases in its examples
 * (prefill.ts), rendered again only when they change; its cache key is its hash.
 */
function openApiRoute(openApiText: (releases: ReleaseExamples) => string, operation: Json): Route {
  const rendered = new WeakMap<Services, { of: string; body: Buffer; key: string }>();
  return {
    path: '/openapi.json',
    operation,
    async handle(ctx, services) {
      const releases = servedReleases(services);
      const of = Object.values(releases).join(' ');
      let made = rendered.get(services);
      if (made?.of !== of) {
        const body = Buffer.from(openApiText(releases));
        made = { of, body, key: `static ${createHash('sha256').update(body).digest('base64url')}` };
        rendered.set(services, made);
      }
      const { body, key } = made;
      ctx.set('Content-Security-Policy', CSP);
      ctx.set('X-Content-Type-Options', 'nosniff');
      await respondCacheable(ctx, services, { key, contentType: 'application/json; charset=utf-8', render: async () => ({ body }) });
    },
  };
}

/** The documentation routes; `openApiText` is the document as served (it describes these routes too, so it is asked for when first served). */
export function docRoutes(openApiText: (releases: ReleaseExamples) => string): Route[] {
  const changelog = path.resolve(import.meta.dirname, '../../../CHANGELOG.md');
  return [
    openApiRoute(
      openApiText,
      documentation(
        '/openapi.json',
        'getOpenApi',
        'This document (no key)',
        "The OpenAPI 3.1 description of this API, built from the code that serves it. Its examples name this server's newest releases.",
        'application/json',
        'OpenAPI 3.1',
        { type: 'object' },
      ),
    ),
    file(
      '/docs/changelog',
      'text/markdown; charset=utf-8',
      () => fs.readFileSync(changelog),
      documentation(
        '/docs/changelog',
        'getChangelog',
        'CHANGELOG.md: dated changes, newest first (no key)',
        'Dated entries, newest first; changes that can break a client start with `Breaking:` (spec 9.4).',
        'text/markdown',
        'Markdown',
      ),
    ),
    file(
      '/docs',
      'text/html; charset=utf-8',
      () => Buffer.from(PAGE),
      documentation(
        '/docs',
        'getDocs',
        'This document as a browsable page (no key)',
        'Swagger UI rendering /openapi.json, served from this origin only.',
        'text/html',
        'HTML',
      ),
    ),
    file('/docs/init.js', 'text/javascript; charset=utf-8', () => Buffer.from(INIT)),
    file('/docs/swagger-ui.css', 'text/css; charset=utf-8', () => asset('swagger-ui.css')),
    file('/docs/favicon-32x32.png', 'image/png', () => asset('favicon-32x32.png')),
    file('/docs/swagger-ui-bundle.js', 'text/javascript; charset=utf-8', () => asset('swagger-ui-bundle.js')),
  ];
}
