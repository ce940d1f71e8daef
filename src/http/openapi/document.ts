import { SHARED_SCHEMAS } from './components.ts';
import { examplePath, exampleRequest } from './examples.ts';
import type { Documented, Json } from './json.ts';
import { WEBHOOK_EVENTS, WEBHOOK_PATHS, WEBHOOK_SCHEMAS } from './operations/webhooks.ts';
import { parametersOf } from './parameters.ts';
import { DOCUMENTED_RELEASES, prefill, type ReleaseExamples } from './prefill.ts';
import { HEADERS } from './responses.ts';

// The OpenAPI 3.1 description of the public API, collected from the routes: each
// declares its own operation (parameters from its valibot schema, every error it can
// give from the error catalog) and the schemas its responses name.
// docs/openapi.json is this document as it names DOCUMENTED_RELEASES, kept equal by
// test/openapi.test.ts; a server serves it naming its own releases (prefill.ts).

/** A route's operation: a data endpoint's gets its options as parameters and its example request as `x-codeSamples`. */
function operationOf({ operation, endpoint }: Documented): Json {
  return endpoint ? { ...operation, parameters: parametersOf(endpoint), 'x-codeSamples': exampleRequest(endpoint.example) } : operation!;
}

/** The operation, its description ending with its example request (`x-codeSamples`), which Swagger UI does not show otherwise. */
function withExample(operation: Json): Json {
  const example = examplePath(operation);
  return example === undefined ? operation : { ...operation, description: `${operation.description}\n\nExample: \`GET ${example}\`` };
}

export function openApiDocument(routes: readonly Documented[], version: string, releases: ReleaseExamples = DOCUMENTED_RELEASES): Json {
  return {
    openapi: '3.1.0',
    info: {
      title: 'data-query-service',
      version,
      // Keys come from an operator's invite (spec 5.2): that operator is who clients ask.
      contact: { name: 'The operator who sent your invite link' },
      description:
        'Read-only API over gambling-industry financial data. Every /v1 request needs an `x-api-key` and counts against 100 requests a minute and 10,000 a day per key. Pages are keyset pages: follow `pagination.cursor` (JSON), `X-Next-Cursor` (CSV, Arrow) or `Link: rel="next"` (any format). Errors are JSON: `error`, and `details` for field errors. What changed, and when: [the changelog](/docs/changelog).',
    },
    servers: [{ url: '/' }],
    tags: [
      {
        name: 'data',
        description: 'The datasets: rows, totals and the catalog. Every request needs `x-api-key` and counts against the limits.',
      },
      { name: 'webhooks', description: 'Signed notifications of new releases, per key (Standard Webhooks).' },
      {
        name: 'usage',
        description: 'Where the key stands and what it used. Needs `x-api-key`; counts against USAGE_LIMIT_PER_MINUTE only.',
      },
      { name: 'operations', description: 'For orchestrators; no key.' },
      { name: 'documentation', description: 'This document, its page and the changelog; no key.' },
    ],
    security: [{ apiKey: [] }],
    paths: {
      ...Object.fromEntries(
        routes.flatMap((route) => (route.operation ? [[route.path, { get: withExample(prefill(operationOf(route), releases)) }]] : [])),
      ),
      // Not GET routes of the list: registered by src/http/routes/webhooks.ts.
      ...WEBHOOK_PATHS,
    },
    webhooks: WEBHOOK_EVENTS,
    components: {
      securitySchemes: {
        apiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'x-api-key',
          description: 'A key `sk_live_…` from the invite and claim flow (spec 5).',
        },
      },
      headers: HEADERS,
      schemas: Object.assign({}, SHARED_SCHEMAS, WEBHOOK_SCHEMAS, ...routes.map((route) => route.schemas ?? {})),
    },
  };
}
