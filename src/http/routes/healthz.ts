import { exampleRequest } from '../openapi/examples.ts';
import { edgeErrors } from '../openapi/responses.ts';
import type { Route } from './route.ts';

/** No key needed: load balancers and orchestrators poll it. 200 once data is loaded. */
export const healthz: Route = {
  path: '/healthz',
  handle(ctx, { releases }) {
    const release = releases.current();
    ctx.status = release ? 200 : 503;
    ctx.body = release ? { status: 'ok', release: release.id, retained: releases.retained() } : { status: 'loading' };
  },
  operation: {
    operationId: 'getHealth',
    tags: ['operations'],
    summary: 'Whether data is served (no key)',
    description: 'For orchestrators and balancers: 200 with the release served once data is loaded, 503 while the first release loads.',
    security: [],
    'x-codeSamples': exampleRequest('/healthz', false),
    responses: {
      200: {
        description:
          'Serving a release; `retained` are the other releases loaded (the one a switch replaced, those asked for by `release=` or a cursor), most recently used first.',
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['status', 'release', 'retained'],
              properties: { status: { const: 'ok' }, release: { type: 'string' }, retained: { type: 'array', items: { type: 'string' } } },
            },
          },
        },
      },
      503: {
        description: 'The first release is still loading.',
        content: { 'application/json': { schema: { type: 'object', required: ['status'], properties: { status: { const: 'loading' } } } } },
      },
      ...edgeErrors(),
    },
  },
};
