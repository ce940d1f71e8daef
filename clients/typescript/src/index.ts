// The typed client, for consumers: `import { DataQueryClient } from 'data-query-client'`, the npm
// package each server serves at /clients/typescript/ (tools/clients/typescript.ts builds it).
export { DataQueryClient } from './client.ts';
export { DataQueryError, DataQueryNetworkError } from './errors.ts';
export {
  type ClientOptions,
  EXPORT_MEDIA,
  type ExportOptions,
  type FormatBody,
  MEDIA,
  type ReleaseChoice,
  type WalkOptions,
} from './options.ts';
export { DEFAULT_RETRY, type RetryEvent, type RetryPolicy } from './retry.ts';
export type * from './types.ts';
export type { Webhook, WebhookAttempt, WebhookDelivery, WebhookEvent, Webhooks } from './webhooks.ts';
