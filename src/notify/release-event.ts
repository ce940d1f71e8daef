import type { Database } from '../duckdb/database.ts';
import { FINANCIAL_DATASETS } from '../registry.ts';
import { firstPublished, type Publication } from '../releases/publication-log.ts';
import { type DatasetChanges, ReleaseChangeCounts } from './change-counts.ts';

export type { ChangeCounts, DatasetChanges } from './change-counts.ts';

// What a subscriber is told of one line of the publication log: the body of a webhook
// delivery and one entry of the feeds (docs/api.md "Notifications"). Built from the
// line, the log and the releases' manifests; only counts and links, never values.

export type ReleaseEventType = Publication['type'];

export interface ReleaseEventLinks {
  /** The catalog of the release served after the event: the one published, or for a withdrawal the one served again. */
  readonly catalog: string;
  /**
   * Per financial dataset, its revisions from `previous` to `release`; null for a
   * withdrawal (the withdrawn release can no longer be named) and for the first release.
   */
  readonly revisions: Readonly<Record<string, string>> | null;
}

export interface ReleaseEvent {
  readonly type: ReleaseEventType;
  /** When the switch happened (the log line's time): the same on every delivery of it. */
  readonly timestamp: string;
  readonly data: {
    /** Published: the release now served. Withdrawn: the release no longer served. */
    readonly release: string;
    /** Published: the release it replaced. Withdrawn: the release served again in its place. */
    readonly previous: string | null;
    /** When `release` was first published. */
    readonly published_at: string;
    /**
     * Rows added, removed and changed per dataset, from the release served before the
     * event to the one served after it: `previous` → `release` for a publication,
     * `release` → `previous` for a withdrawal. Null when they cannot be known.
     */
    readonly changes: DatasetChanges | null;
    readonly links: ReleaseEventLinks;
  };
}

export interface ReleaseEventsOptions {
  readonly dataDir: string;
  readonly db: Database;
  /** The publication log as it stands (Releases.publications): when each release was first published. */
  readonly publications: () => readonly Publication[];
}

/** `path` under `baseUrl`, which may end with a path of its own (https://example.com/data/). */
const under = (baseUrl: string, path: string) => `${baseUrl.replace(/\/+$/, '')}${path}`;

/** The links of an event, under `baseUrl` (PUBLIC_URL, or the request's origin). */
export function eventLinks(line: Publication, baseUrl: string): ReleaseEventLinks {
  const served = line.type === 'release.published' ? line.release : line.previous;
  const catalog = under(baseUrl, served === null ? '/v1/catalog' : `/v1/catalog?release=${served}`);
  if (line.type === 'release.withdrawn' || line.previous === null) return { catalog, revisions: null };
  const range = `from=${line.previous}&to=${line.release}`;
  return {
    catalog,
    revisions: Object.fromEntries(
      FINANCIAL_DATASETS.map((def) => [def.name, under(baseUrl, `/v1/revisions?metric=${def.metrics[0]}&${range}`)]),
    ),
  };
}

/**
 * One per service (Services.releaseEvents): the event of any line of the publication
 * log, its counts computed once per pair of releases however many feeds and webhook
 * deliveries ask for them (change-counts.ts).
 */
export class ReleaseEvents {
  private readonly counts: ReleaseChangeCounts;

  constructor(private readonly options: ReleaseEventsOptions) {
    this.counts = new ReleaseChangeCounts(options);
  }

  /** The event of log line `line`, its links under `baseUrl`. Rejects only when counting in DuckDB fails (tried again next time). */
  async event(line: Publication, baseUrl: string): Promise<ReleaseEvent> {
    const changes =
      line.type === 'release.published'
        ? await this.counts.between(line.previous, line.release)
        : line.previous === null
          ? null
          : await this.counts.between(line.release, line.previous);
    return {
      type: line.type,
      timestamp: line.at,
      data: {
        release: line.release,
        previous: line.previous,
        published_at: firstPublished(this.options.publications()).get(line.release) ?? line.at,
        changes,
        links: eventLinks(line, baseUrl),
      },
    };
  }
}
