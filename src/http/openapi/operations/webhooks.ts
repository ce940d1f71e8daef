import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import {
  BlockedAddressError,
  ConflictError,
  EndpointUnreachableError,
  InvalidParametersError,
  KeysUnavailableError,
  NotFoundError,
  NotReadyError,
  TooManyWebhooksError,
  WebhooksUnavailableError,
} from '../../../errors/index.ts';
import { createBody, patchBody } from '../../../webhooks/request-bodies.ts';
import { EVENTS } from '../../../webhooks/store.ts';
import type { Json } from '../json.ts';
import { errorResponse, headerRefs, keyedErrors, LIMIT_HEADERS, ref } from '../responses.ts';

// /v1/webhooks in the OpenAPI document: each operation of src/http/routes/webhooks.ts,
// and under the document's top-level `webhooks` what each delivery carries.

const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^wh_[0-9a-f]{16}$' } };
const json = (schema: Json, description: string, headers: Json = {}) => ({
  description,
  headers: { ...headerRefs(LIMIT_HEADERS), ...headers },
  content: { 'application/json': { schema } },
});
const errors = (extra: Record<string, Json> = {}) => ({
  ...keyedErrors({ invalidBody: new InvalidParametersError({ url: ['Expected an https:// URL'] }) }),
  404: errorResponse("No such webhook for this API key (another key's answers 404 too).", {
    notFound: new NotFoundError('No webhook wh_0123456789abcdef for this API key'),
  }),
  503: errorResponse(
    'Data is still loading, the key cannot be verified right now, or Redis (REDIS_URL), where webhooks are kept, is not answering (nothing was changed); retry after `Retry-After` seconds.',
    { loading: new NotReadyError(), keys: new KeysUnavailableError(), unavailable: new WebhooksUnavailableError() },
    headerRefs(['Retry-After']),
  ),
  ...extra,
});
const refused = () =>
  errorResponse(
    'The URL is refused: it is, or resolves to, an address webhooks may not reach, or it did not answer the signed `webhook.test` with a 2xx within 15 s.',
    {
      blocked: new BlockedAddressError(
        '127.0.0.1 is a loopback address; webhooks reach only public addresses unless WEBHOOK_ALLOW_CIDRS names its range (now empty)',
      ),
      unreachable: new EndpointUnreachableError('answered 404'),
    },
  );
/** A request body, converted from the schema the route validates it with. */
function jsonBody(schema: v.GenericSchema): Json {
  const { $schema: _, ...converted } = toJsonSchema(schema, { errorMode: 'ignore' }) as Json & { $schema?: string };
  return { required: true, content: { 'application/json': { schema: converted } } };
}

const operation = (operationId: string, summary: string, description: string, more: Json) => ({
  operationId,
  tags: ['webhooks'],
  summary,
  description,
  ...more,
});

export const WEBHOOK_PATHS: Readonly<Record<string, Json>> = {
  '/v1/webhooks': {
    post: operation(
      'createWebhook',
      'Subscribe a URL to release events',
      'Sends the URL a signed `webhook.test` event first; only a 2xx within 15 s makes the endpoint. The secret is shown once, here. At most 5 per key.',
      {
        requestBody: jsonBody(createBody),
        responses: {
          201: json(ref('WebhookCreated'), 'Made; `secret` is never shown again.'),
          ...errors({ 409: errorResponse('The key has 5 webhooks already.', { tooMany: new TooManyWebhooksError(5) }), 422: refused() }),
        },
      },
    ),
    get: operation('listWebhooks', "This key's webhooks", 'Never their secrets.', {
      responses: {
        200: json(
          { type: 'object', required: ['webhooks'], properties: { webhooks: { type: 'array', items: ref('Webhook') } } },
          'The webhooks.',
        ),
        ...errors(),
      },
    }),
  },
  '/v1/webhooks/{id}': {
    parameters: [idParameter],
    get: operation('getWebhook', 'One webhook', '`enabled` false with `disabled_reason` says why deliveries stopped.', {
      responses: { 200: json(ref('Webhook'), 'The webhook.'), ...errors() },
    }),
    patch: operation(
      'updateWebhook',
      'Change its URL or events, or enable it again',
      'A new URL must answer the signed `webhook.test` as a new endpoint does; `enabled: true` forgets the failures that disabled it.',
      {
        requestBody: jsonBody(patchBody),
        responses: { 200: json(ref('Webhook'), 'The webhook as changed.'), ...errors({ 422: refused() }) },
      },
    ),
    delete: operation('deleteWebhook', 'Unsubscribe', 'Its pending retries and its delivery log go with it.', {
      responses: { 204: { description: 'Deleted.', headers: headerRefs(LIMIT_HEADERS) }, ...errors() },
    }),
  },
  '/v1/webhooks/{id}/test': {
    parameters: [idParameter],
    post: operation('testWebhook', 'Send it a signed webhook.test now', 'The attempt is in its delivery log too.', {
      responses: {
        200: json(ref('WebhookAttempt'), 'What the URL answered.'),
        ...errors({
          409: errorResponse('The webhook is disabled.', {
            disabled: new ConflictError('Webhook wh_0123456789abcdef is disabled (…); enable it with PATCH {"enabled": true}'),
          }),
        }),
      },
    }),
  },
  '/v1/webhooks/{id}/rotate-secret': {
    parameters: [idParameter],
    post: operation(
      'rotateWebhookSecret',
      'A new secret; the old one signs beside it for 24 hours',
      'Each delivery carries one signature per secret, space-separated, until `previous_expires_at`.',
      {
        responses: {
          200: json(
            {
              type: 'object',
              additionalProperties: false,
              required: ['secret', 'previous_expires_at'],
              properties: { secret: { type: 'string', pattern: '^whsec_' }, previous_expires_at: { type: 'string', format: 'date-time' } },
            },
            'The new secret, shown once.',
          ),
          ...errors(),
        },
      },
    ),
  },
  '/v1/webhooks/{id}/deliveries': {
    parameters: [idParameter],
    get: operation(
      'listWebhookDeliveries',
      'Its delivery log: every attempt of the last 35 days, newest first',
      'Paged by `limit` (1–100, 50) and `cursor` (`pagination.cursor` of the page before).',
      {
        parameters: [
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 }, example: 50 },
          { name: 'cursor', in: 'query', schema: { type: 'string', pattern: '^[0-9]+$' }, example: '50' },
        ],
        responses: {
          200: json(
            {
              type: 'object',
              required: ['deliveries', 'pagination'],
              properties: {
                deliveries: { type: 'array', items: ref('WebhookDelivery') },
                pagination: { type: 'object', required: ['cursor'], properties: { cursor: { type: ['string', 'null'] } } },
              },
            },
            'One page of attempts.',
          ),
          ...errors(),
        },
      },
    ),
  },
  '/v1/webhooks/{id}/deliveries/{msg_id}/redeliver': {
    parameters: [idParameter, { name: 'msg_id', in: 'path', required: true, schema: { type: 'string', pattern: '^msg_[0-9]+$' } }],
    post: operation(
      'redeliverWebhookMessage',
      'Send a message of its log again, with the same webhook-id',
      'Signed with the secrets of now; one attempt, logged.',
      {
        responses: { 200: json(ref('WebhookAttempt'), 'What the URL answered.'), ...errors() },
      },
    ),
  },
};

const webhook = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'url', 'events', 'enabled', 'disabled_reason', 'created_at'],
  properties: {
    id: { type: 'string', pattern: '^wh_[0-9a-f]{16}$' },
    url: { type: 'string', format: 'uri' },
    // As kept: each event type once.
    events: { type: 'array', items: { enum: [...EVENTS] }, minItems: 1, uniqueItems: true },
    enabled: { type: 'boolean' },
    disabled_reason: {
      type: ['string', 'null'],
      description: 'Why it was disabled: a 410, or two messages in a row that failed every attempt.',
    },
    created_at: { type: 'string', format: 'date-time' },
  },
};
const attemptFields = {
  status_code: { type: ['integer', 'null'], description: 'null when no answer came.' },
  duration_ms: { type: 'integer', minimum: 0 },
  error: { type: ['string', 'null'], description: 'Why it failed; null for a 2xx.' },
};

export const WEBHOOK_SCHEMAS: Readonly<Record<string, Json>> = {
  Webhook: webhook,
  WebhookCreated: {
    ...webhook,
    required: [...webhook.required, 'secret'],
    properties: { ...webhook.properties, secret: { type: 'string', pattern: '^whsec_' } },
  },
  WebhookAttempt: {
    type: 'object',
    required: ['msg_id', ...Object.keys(attemptFields)],
    properties: { msg_id: { type: 'string' }, attempt: { type: 'integer', minimum: 1 }, ...attemptFields },
  },
  WebhookDelivery: {
    type: 'object',
    additionalProperties: false,
    required: ['at', 'msg_id', 'attempt', ...Object.keys(attemptFields)],
    properties: {
      at: { type: 'string', format: 'date-time' },
      msg_id: { type: 'string' },
      attempt: { type: 'integer', minimum: 1 },
      ...attemptFields,
    },
  },
  ReleaseEvent: {
    type: 'object',
    additionalProperties: false,
    required: ['type', 'timestamp', 'data'],
    properties: {
      type: { enum: [...EVENTS] },
      timestamp: { type: 'string', format: 'date-time', description: "The publication log line's time: the same on every attempt." },
      data: {
        type: 'object',
        additionalProperties: false,
        required: ['release', 'previous', 'published_at', 'changes', 'links'],
        properties: {
          release: { type: 'string', description: 'Published: the release now served. Withdrawn: the release no longer served.' },
          previous: { type: ['string', 'null'], description: 'Published: the release it replaced. Withdrawn: the release served again.' },
          published_at: { type: 'string', format: 'date-time' },
          changes: {
            type: ['object', 'null'],
            description: 'Rows added, removed and changed per dataset; null when they cannot be known.',
            additionalProperties: {
              type: 'object',
              required: ['added', 'removed', 'changed'],
              properties: { added: { type: 'integer' }, removed: { type: 'integer' }, changed: { type: 'integer' } },
            },
          },
          links: {
            type: 'object',
            required: ['catalog', 'revisions'],
            properties: {
              catalog: { type: 'string', format: 'uri' },
              revisions: { type: ['object', 'null'], additionalProperties: { type: 'string', format: 'uri' } },
            },
          },
        },
      },
    },
  },
};

const signedHeaders = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    schema: { type: 'string', pattern: '^msg_' },
    description: '`msg_<seq>` of the publication log; the same on every retry.',
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    schema: { type: 'string', pattern: '^[0-9]+$' },
    description: 'Unix seconds of this attempt.',
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    schema: { type: 'string' },
    description: 'Standard Webhooks: `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, space-separated, one per live secret.',
  },
];

const delivery = (operationId: string, summary: string) => ({
  post: {
    operationId,
    tags: ['webhooks'],
    summary,
    description:
      'Answer 2xx within 15 s. Anything else, a redirect included, is retried per WEBHOOK_RETRY_SCHEDULE (Retry-After honoured); 410 disables the endpoint at once.',
    parameters: signedHeaders,
    requestBody: { required: true, content: { 'application/json': { schema: ref('ReleaseEvent') } } },
    responses: { '2XX': { description: 'Received.' }, 410: { description: 'Gone: disables the endpoint.' } },
  },
});

/** The document's top-level `webhooks` (OpenAPI 3.1): what a subscribed URL is sent. */
export const WEBHOOK_EVENTS: Readonly<Record<string, Json>> = {
  'release.published': delivery('releasePublished', 'A release is served by every replica (or WEBHOOK_SETTLE_MAX_MS passed)'),
  'release.withdrawn': delivery('releaseWithdrawn', 'A rollback withdrew a release'),
};
