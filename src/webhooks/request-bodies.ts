import * as v from 'valibot';
import { EVENTS } from './store.ts';

// What a client may send to make or change a webhook: the one definition that the
// route validates with and the OpenAPI document's request bodies are converted from.

const url = v.pipe(
  v.string(),
  v.maxLength(2000),
  v.url('Expected an https:// URL'),
  // One message for either failure: a text that is no URL has no protocol to check.
  v.check((text) => !URL.canParse(text) || /^https?:$/.test(new URL(text).protocol), 'Expected an https:// URL'),
);

const events = v.pipe(
  v.array(v.picklist(EVENTS, `Expected event types among ${EVENTS.join(', ')}`)),
  v.minLength(1, 'Name at least one event type'),
  v.transform((list) => [...new Set(list)]),
);

/** POST /v1/webhooks: every event type unless `events` names some. */
export const createBody = v.strictObject({ url, events: v.optional(events, [...EVENTS]) });

/** PATCH /v1/webhooks/{id}: what is given changes. */
export const patchBody = v.strictObject({ url: v.optional(url), events: v.optional(events), enabled: v.optional(v.boolean()) });
