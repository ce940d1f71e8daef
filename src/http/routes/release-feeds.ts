import { createHash } from 'node:crypto';
import { InvalidParametersError, NotReadyError } from '../../errors/index.ts';
import { ATOM_TYPE, atomFeed, FEED_ENTRIES, type FeedEntry, JSON_FEED_TYPE, jsonFeed } from '../../notify/feeds.ts';
import type { ReleaseEvents } from '../../notify/release-event.ts';
import { unknownKeys } from '../../query/options/params.ts';
import type { Services } from '../../services.ts';
import { changeCounts, releaseId } from '../openapi/components.ts';
import { exampleRequest } from '../openapi/examples.ts';
import type { Json } from '../openapi/json.ts';
import { headerRefs, keyedErrors, ref } from '../openapi/responses.ts';
import type { RequestContext } from '../request-state.ts';
import { respondCacheable } from '../respond/cacheable.ts';
import type { Route } from './route.ts';

// GET /v1/releases.atom and /v1/releases.json: the publication log as feeds
// (src/notify/feeds.ts), for feed readers and workflow tools. Rendered once per line
// of the log (and per base URL), never per request: the counts come from
// Services.releaseEvents, which computes each once. Public unless FEED_PUBLIC=false
// (src/http/middleware/api-key.ts): ids, dates and counts, never values.

interface Bodies {
  readonly atom: Buffer;
  readonly json: Buffer;
}

// Per service: the last log and base URL rendered, shared by the requests that came meanwhile.
const rendered = new WeakMap<ReleaseEvents, { of: string; bodies: Promise<Bodies> }>();

async function render(services: Services, baseUrl: string): Promise<Bodies> {
  const lines = services.releases.publications().slice(-FEED_ENTRIES).reverse();
  const entries: FeedEntry[] = await Promise.all(
    lines.map(async (line) => ({ line, event: await services.releaseEvents.event(line, baseUrl) })),
  );
  return { atom: Buffer.from(atomFeed(baseUrl, entries)), json: Buffer.from(jsonFeed(baseUrl, entries)) };
}

function bodiesFor(services: Services, baseUrl: string): Promise<Bodies> {
  const log = services.releases.publications();
  const of = `${baseUrl} ${log.length}`;
  const last = rendered.get(services.releaseEvents);
  if (last?.of === of) return last.bodies;
  const bodies = render(services, baseUrl);
  rendered.set(services.releaseEvents, { of, bodies });
  // A render that failed (counting in DuckDB) is tried again by the next request.
  bodies.catch(() => {
    if (rendered.get(services.releaseEvents)?.bodies === bodies) rendered.delete(services.releaseEvents);
  });
  return bodies;
}

const unknownParameter = (path: string) => `Unknown parameter: ${path} takes none`;

function feedRoute(format: keyof Bodies, path: string, contentType: string, operation: Json, schemas?: Record<string, Json>): Route {
  const keyed = keyedErrors({ unknownParameter: new InvalidParametersError({ limit: [unknownParameter(path)] }) }) as Record<string, Json>;
  return {
    path,
    ...(schemas && { schemas }),
    async handle(ctx: RequestContext, services: Services) {
      const unknown = unknownKeys(ctx.query, () => false);
      if (unknown.length) throw new InvalidParametersError(Object.fromEntries(unknown.map((key) => [key, [unknownParameter(path)]])));
      if (!services.releases.current()) throw new NotReadyError();
      const baseUrl = services.notifications.publicUrl ?? `${ctx.protocol}://${ctx.host}`;
      const body = (await bodiesFor(services, baseUrl))[format];
      const key = `${path} ${createHash('sha256').update(body).digest('base64url')}`;
      await respondCacheable(ctx, services, { key, contentType, render: async () => ({ body }) });
      // Its links follow the request's Host when PUBLIC_URL is unset, which the replay table does not key: never replayed.
      ctx.state.cacheable = undefined;
    },
    operation: {
      ...operation,
      tags: ['data'],
      // No key unless the server sets FEED_PUBLIC=false; the limit headers come only with a key.
      security: [{}, { apiKey: [] }],
      'x-codeSamples': exampleRequest(path, false),
      responses: {
        ...(operation.responses as Json),
        304: { description: 'If-None-Match holds the ETag.' },
        ...keyed,
        // Without a key, no limit headers.
        400: { ...keyed[400], headers: {} },
        414: { ...keyed[414], headers: {} },
      },
    },
  };
}

const ENTRIES = `one entry per line of the publication log, newest first (the ${FEED_ENTRIES} newest): each publication or withdrawal (a rollback), with the rows added, removed and changed per dataset from the release served before it to the one served after, and links to the catalog of the release served after it and to the revisions between the two. Ids, dates and counts, never values: no key is needed unless the server sets FEED_PUBLIC=false. Links are under PUBLIC_URL, or the request's own address when the server sets none. An entry's id ends in \`#msg_<seq>\`, the \`webhook-id\` of its webhook deliveries.`;

const schemas: Record<string, Json> = {
  ReleaseEvent: {
    type: 'object',
    description: 'What subscribers are told of one line of the publication log: a publication or a withdrawal by a rollback.',
    additionalProperties: false,
    required: ['type', 'timestamp', 'data'],
    properties: {
      type: { enum: ['release.published', 'release.withdrawn'] },
      timestamp: { type: 'string', format: 'date-time', description: 'When the release served switched.' },
      data: {
        type: 'object',
        additionalProperties: false,
        required: ['release', 'previous', 'published_at', 'changes', 'links'],
        properties: {
          release: { ...releaseId, description: 'Published: the release now served. Withdrawn: the release no longer served.' },
          previous: {
            oneOf: [releaseId, { type: 'null' }],
            description: 'Published: the release it replaced (null for the first). Withdrawn: the release served again in its place.',
          },
          published_at: { type: 'string', format: 'date-time', description: 'When `release` was first published.' },
          changes: {
            oneOf: [{ type: 'object', additionalProperties: changeCounts }, { type: 'null' }],
            description:
              'Rows added, removed and changed per dataset, from the release served before the event to the one served after (for the first release, every row added); null when a release compared was removed by `etl prune` before they were known.',
          },
          links: {
            type: 'object',
            additionalProperties: false,
            required: ['catalog', 'revisions'],
            properties: {
              catalog: { type: 'string', format: 'uri', description: 'The catalog of the release served after the event.' },
              revisions: {
                oneOf: [{ type: 'object', additionalProperties: { type: 'string', format: 'uri' } }, { type: 'null' }],
                description:
                  'Per financial dataset, its revisions from `previous` to `release`; null for a withdrawal (the withdrawn release can no longer be named) and for the first release.',
              },
            },
          },
        },
      },
    },
  },
  ReleaseJsonFeed: {
    type: 'object',
    description: 'A JSON Feed 1.1 (https://jsonfeed.org/version/1.1).',
    required: ['version', 'title', 'items'],
    properties: {
      version: { const: 'https://jsonfeed.org/version/1.1' },
      title: { type: 'string' },
      home_page_url: { type: 'string', format: 'uri' },
      feed_url: { type: 'string', format: 'uri' },
      authors: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
      language: { type: 'string' },
      items: {
        type: 'array',
        items: {
          type: 'object',
          required: ['id', 'url', 'title', 'content_text', 'date_published', 'tags', '_release_event'],
          properties: {
            id: { type: 'string', description: 'Ends in `#msg_<seq>`, the `webhook-id` of its deliveries.' },
            url: { type: 'string', format: 'uri', description: 'The catalog of the release served after the event.' },
            title: { type: 'string' },
            content_text: { type: 'string', description: 'The counts in words.' },
            date_published: { type: 'string', format: 'date-time' },
            tags: { type: 'array', items: { enum: ['release.published', 'release.withdrawn'] } },
            _release_event: ref('ReleaseEvent'),
          },
        },
      },
    },
  },
};

export const releasesAtom = feedRoute('atom', '/v1/releases.atom', ATOM_TYPE, {
  operationId: 'getReleasesAtom',
  summary: 'Publications and withdrawals as an Atom feed (no key)',
  description: `An Atom feed (RFC 4287) for feed readers: ${ENTRIES} Each entry's \`link rel="alternate"\` is that catalog, its \`link rel="related"\` the revisions per financial dataset, its \`summary\` the counts in words, its \`category\` the event type.`,
  responses: {
    200: {
      description: 'The feed.',
      headers: headerRefs(['ETag', 'Cache-Control']),
      content: { 'application/atom+xml': { schema: { type: 'string' } } },
    },
  },
});

export const releasesJsonFeed = feedRoute(
  'json',
  '/v1/releases.json',
  JSON_FEED_TYPE,
  {
    operationId: 'getReleasesJsonFeed',
    summary: 'Publications and withdrawals as a JSON Feed (no key)',
    description: `A JSON Feed 1.1 for feed readers and workflow tools: ${ENTRIES} Each item carries its whole event, as a webhook delivers it, in the extension \`_release_event\`.`,
    responses: {
      200: {
        description: 'The feed.',
        headers: headerRefs(['ETag', 'Cache-Control']),
        content: { 'application/feed+json': { schema: ref('ReleaseJsonFeed') } },
      },
    },
  },
  schemas,
);
