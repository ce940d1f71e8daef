import { CLIENT_LANGUAGES, clientInstalls } from '../../clients.ts';
import { SERVICE_VERSION } from '../../version.ts';
import { exampleRequest } from '../openapi/examples.ts';
import { edgeErrors } from '../openapi/responses.ts';
import type { Route } from './route.ts';

// GET /: the first URL anyone opens. No key: it names the entry points, which of them
// need one, and where the documentation is, so a 404 is never the first answer.

const ENTRY_POINTS = {
  catalog: '/v1/catalog',
  releases: '/v1/releases',
  financials: '/v1/financials?metric=ggr&limit=5',
  aggregate: '/v1/aggregate?metric=ggr&group_by=region,year&fx=USD',
  facets: '/v1/facets?metric=ggr',
  docs: '/docs',
  openapi: '/openapi.json',
  explore: '/explore',
  health: '/healthz',
} as const;

const BODY = {
  service: 'data-query-service',
  description:
    "A read-only JSON API over the gambling industry's financial data (gross gaming revenue, turnover, FX rates, country indicators) by year, region, country, state, category, product and channel.",
  key: 'Send your API key as the x-api-key header on every /v1 request; /docs, /openapi.json, /explore and /healthz need none.',
  links: ENTRY_POINTS,
  // Named, not linked: a diff needs two releases, and an export downloads a whole dataset against the daily budget.
  endpoints: [
    '/v1/financials',
    '/v1/reference',
    '/v1/aggregate',
    '/v1/facets',
    '/v1/revisions',
    '/v1/history',
    '/v1/export',
    '/v1/releases',
    '/v1/catalog',
  ],
};

export const frontDoor: Route = {
  path: '/',
  handle(ctx) {
    ctx.set('Cache-Control', 'public, max-age=300');
    // The install lines name this server as the request reached it: its Host, and behind TRUST_PROXY X-Forwarded-Proto and -Host.
    ctx.body = { ...BODY, clients: clientInstalls(`${ctx.protocol}://${ctx.host}`, SERVICE_VERSION) };
  },
  operation: {
    operationId: 'getIndex',
    tags: ['operations'],
    summary: 'The entry points (no key)',
    description:
      'What the service is, how to send a key, links that answer as they are (the catalog, releases, a request of the main endpoints, the reference page, this document, the Explore page, health), every /v1 endpoint, and the client packages this server serves, each with the line that installs it from here.',
    security: [],
    'x-codeSamples': exampleRequest('/', false),
    responses: {
      200: {
        description: 'The entry points.',
        content: {
          'application/json': {
            schema: {
              type: 'object',
              additionalProperties: false,
              required: ['service', 'description', 'key', 'links', 'endpoints', 'clients'],
              properties: {
                service: { const: 'data-query-service' },
                description: { type: 'string' },
                key: { type: 'string' },
                links: {
                  type: 'object',
                  additionalProperties: false,
                  required: Object.keys(ENTRY_POINTS),
                  properties: Object.fromEntries(Object.keys(ENTRY_POINTS).map((name) => [name, { type: 'string' }])),
                },
                endpoints: { type: 'array', items: { type: 'string' }, description: 'Every /v1 endpoint (each needs the key).' },
                clients: {
                  type: 'object',
                  additionalProperties: false,
                  required: CLIENT_LANGUAGES,
                  description: "The client packages at this server's version (no key): each one's URL, and the line that installs it.",
                  properties: Object.fromEntries(
                    CLIENT_LANGUAGES.map((language) => [
                      language,
                      {
                        type: 'object',
                        additionalProperties: false,
                        required: ['url', 'install'],
                        properties: { url: { type: 'string', format: 'uri' }, install: { type: 'string' } },
                      },
                    ]),
                  ),
                },
              },
            },
          },
        },
      },
      ...edgeErrors(),
    },
  },
};
