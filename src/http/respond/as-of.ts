import { NoReleaseAsOfError, NotReadyError } from '../../errors/index.ts';
import type { AsOf } from '../../query/options/params.ts';
import { asOfWithRelease } from '../../query/options/shared.ts';
import { servedAt } from '../../releases/publication-log.ts';
import type { Releases } from '../../releases/releases.ts';
import type { RequestContext } from '../request-state.ts';

// `as_of=`: the release the service was serving at an instant, as the publication log
// records it, read as `release=` of that release would be (docs/api.md "Point in time").

/** What an answer read at `as_of` says of it: the instant asked for, and the release it read. */
export interface AsOfMeta {
  readonly asked: string;
  readonly release: string;
}

/**
 * The release a request names, by `release=` or by `as_of=`; for `as_of`, also what its
 * answer's `meta.as_of` says, and the same request with `release=` instead set as
 * `Content-Location`, the URL to cite.
 */
export function releaseNamed(
  ctx: RequestContext,
  releases: Releases,
  values: { readonly release?: string; readonly as_of?: AsOf },
): { release: string | undefined; asOf?: AsOfMeta } {
  const { release, as_of: asOf } = values;
  if (asOf === undefined) return { release };
  if (release !== undefined) throw asOfWithRelease;
  const log = releases.publications();
  if (log.length === 0) throw new NotReadyError();
  const served = servedAt(log, asOf.ms);
  if (served === null) throw new NoReleaseAsOfError(asOf.instant, log[0]!.at);
  const cited = new URLSearchParams(ctx.querystring);
  cited.delete('as_of');
  cited.append('release', served);
  ctx.set('Content-Location', `${ctx.path}?${cited}`);
  return { release: served, asOf: { asked: asOf.instant, release: served } };
}
