import { generateAtomFeed, generateJsonFeed } from 'feedsmith';
import type { Publication } from '../releases/publication-log.ts';
import type { ReleaseEvent } from './release-event.ts';

// The publication log as feeds (docs/api.md "Notifications"): Atom (RFC 4287) and JSON
// Feed 1.1, one entry per publication or withdrawal, newest first, each with its counts
// and links. Written by feedsmith, which escapes what it writes and follows both specs.

export const ATOM_TYPE = 'application/atom+xml; charset=utf-8';
export const JSON_FEED_TYPE = 'application/feed+json; charset=utf-8';

/** The newest lines of the log a feed lists: years of monthly releases; /v1/releases has them all. */
export const FEED_ENTRIES = 50;

const TITLE = 'Data releases';
const AUTHOR = { name: 'data-query-service' };

export interface FeedEntry {
  readonly line: Publication;
  readonly event: ReleaseEvent;
}

/** The entry's id, the same in both feeds and named by the webhook-id of its delivery (msg_<seq>). */
const entryId = (baseUrl: string, line: Publication) => `${baseUrl}/v1/releases#msg_${line.seq}`;

const entryTitle = ({ type, data }: ReleaseEvent) =>
  type === 'release.published'
    ? `Release ${data.release} published${data.previous ? `, replacing ${data.previous}` : ''}`
    : `Release ${data.release} withdrawn${data.previous ? `, ${data.previous} served again` : ''}`;

const number = (n: number) => n.toLocaleString('en-US');

/** The counts as a sentence a feed reader shows. */
function summary({ data }: ReleaseEvent): string {
  if (data.changes === null) return 'Rows added, removed and changed: not known (a release compared was removed).';
  const datasets = Object.entries(data.changes).map(([name, c]) => {
    const parts = [
      c.added && `${number(c.added)} added`,
      c.removed && `${number(c.removed)} removed`,
      c.changed && `${number(c.changed)} changed`,
    ];
    const said = parts.filter(Boolean).join(', ');
    return `${name}: ${said || 'no change'}`;
  });
  return `Rows per dataset, from the release served before to the one served after: ${datasets.join('; ')}.`;
}

/** `entries` newest first; `baseUrl` without a trailing slash. */
export function atomFeed(baseUrl: string, entries: readonly FeedEntry[]): string {
  return generateAtomFeed({
    id: `${baseUrl}/v1/releases.atom`,
    title: { value: TITLE },
    updated: new Date(entries[0]?.line.at ?? 0),
    authors: [AUTHOR],
    links: [
      { href: `${baseUrl}/v1/releases.atom`, rel: 'self', type: 'application/atom+xml' },
      { href: `${baseUrl}/v1/releases`, rel: 'alternate', type: 'application/json' },
      { href: `${baseUrl}/v1/releases.json`, rel: 'alternate', type: 'application/feed+json' },
    ],
    entries: entries.map(({ line, event }) => ({
      id: entryId(baseUrl, line),
      title: { value: entryTitle(event) },
      updated: new Date(line.at),
      published: new Date(line.at),
      categories: [{ term: event.type }],
      summary: { value: summary(event), type: 'text' },
      links: [
        { href: event.data.links.catalog, rel: 'alternate', type: 'application/json', title: 'Catalog of the release served' },
        ...Object.entries(event.data.links.revisions ?? {}).map(([dataset, href]) => ({
          href,
          rel: 'related',
          type: 'application/json',
          title: `Revisions of ${dataset}`,
        })),
      ],
    })),
  });
}

/** JSON Feed 1.1; each item carries its whole event as the extension `_release_event`. */
export function jsonFeed(baseUrl: string, entries: readonly FeedEntry[]): string {
  const feed = generateJsonFeed({
    title: TITLE,
    home_page_url: `${baseUrl}/v1/releases`,
    feed_url: `${baseUrl}/v1/releases.json`,
    authors: [AUTHOR],
    language: 'en',
    items: entries.map(({ line, event }) => ({
      id: entryId(baseUrl, line),
      url: event.data.links.catalog,
      title: entryTitle(event),
      content_text: summary(event),
      date_published: new Date(line.at),
      tags: [event.type],
      _release_event: event,
    })),
  });
  return `${JSON.stringify(feed)}\n`;
}
