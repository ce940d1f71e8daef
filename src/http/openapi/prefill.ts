import { examplePath } from './examples.ts';
import type { Json } from './json.ts';

// What Swagger UI's "Try it out" fills in, and what it offers instead. Swagger UI
// fills each parameter with its `example`, so examples that are each fine alone (a
// cursor, `period` beside `year`, `state=Nevada` beside `country=France`, a filter of
// another metric) made a request that answered 400. So only the parameters of the
// operation's example request (`x-codeSamples`, which test/portman.test.ts sends) keep
// an `example`, with that request's values: "Try it out" then "Execute" sends that
// very request. Every other parameter's example moves to its named `examples`, which
// Swagger UI lists in a drop-down without filling it in (docs/api.md "OpenAPI").
//
// Release ids are the serving server's (docs.ts): `release` names its newest
// release, and /v1/revisions compares its two newest (with one release, that release
// with itself: an empty page rather than a 400 for a `from` it does not have).

/** The releases the document's examples name: the newest published, and the one before it (the newest again when there is one). */
export interface ReleaseExamples {
  readonly latest: string;
  readonly previous: string;
}

/**
 * The ids docs/openapi.json names: those of the test suite's two-release data
 * (test/helpers/service.ts), so the committed document is what such a server serves.
 * Routes write their example requests with them; a server replaces them with its own.
 */
export const DOCUMENTED_RELEASES: ReleaseExamples = { latest: '2026-12', previous: '2026-11' };

/** The release id each parameter that names one takes as its example. */
const releaseParameters = (releases: ReleaseExamples): Record<string, string> => ({
  release: releases.latest,
  from: releases.previous,
  to: releases.latest,
});

/** `path?query` with each release parameter's value replaced by `releases`' (the documented ids are in the routes' example requests). */
function withReleases(pathAndQuery: string, releases: ReleaseExamples): string {
  const url = new URL(pathAndQuery, 'http://x');
  const ids = releaseParameters(releases);
  for (const name of Object.keys(ids)) if (url.searchParams.has(name)) url.searchParams.set(name, ids[name]!);
  // URLSearchParams writes ':' and ',' escaped; the examples are read by people, so keep them as written.
  return `${url.pathname}${url.search.replaceAll('%3A', ':').replaceAll('%2C', ',')}`;
}

/** The first of a parameter's named examples, which Swagger UI selects: nothing, so nothing is filled in. */
const NOT_SENT = 'not sent';
const NOT_SENT_EXAMPLE = { summary: 'Not sent: the pre-filled request leaves it out; pick an example below to send it' };

/** A name for an example value: `name=value`, never an integer-like key, which JavaScript would order before "not sent". */
const nameOf = (name: string, value: unknown) => `${name}=${[value].flat().join(',')}`;

/** Why a parameter is not filled in, shown beside its named example. */
function aside(parameter: Json): string {
  const metrics = parameter['x-metrics'] as string[] | undefined;
  if (metrics) return `a filter of metric ${metrics.join(', ')}`;
  if (parameter.name === 'cursor') return "the shape of a cursor: send the previous page's `pagination.cursor` instead";
  if (parameter.in === 'header') return `the ${parameter.name} header`;
  return 'not in the pre-filled request';
}

/** `operation` with its example request and parameter examples as Swagger UI should fill them, naming `releases`. */
export function prefill(operation: Json, releases: ReleaseExamples): Json {
  const documented = examplePath(operation);
  if (documented === undefined) return operation;
  const example = withReleases(documented, releases);
  const query = new URL(example, 'http://x').searchParams;
  const ids = releaseParameters(releases);
  const parameters = ((operation.parameters as Json[] | undefined) ?? []).map((parameter) => {
    const name = parameter.name as string;
    const { example: own, examples: _examples, ...rest } = parameter;
    const value = ids[name] ?? own;
    if (parameter.in === 'query' && query.has(name)) {
      const sent = query.getAll(name);
      const typed = (parameter.schema as Json).type === 'integer' ? sent.map(Number) : sent;
      return { ...rest, example: parameter.style === 'form' ? typed : typed[0] };
    }
    // A required parameter left out would be filled by nothing and refused: the example request must name it.
    if (parameter.required) throw new Error(`${operation.operationId}: the example request ${example} does not send required ${name}`);
    // Swagger UI fills in the first of `examples`: the first says "not sent" and has no value.
    return {
      ...rest,
      examples: { [NOT_SENT]: NOT_SENT_EXAMPLE, [nameOf(name, value)]: { summary: `${nameOf(name, value)}: ${aside(parameter)}`, value } },
    };
  });
  const [sample, ...samples] = operation['x-codeSamples'] as Json[];
  return {
    ...operation,
    ...(operation.parameters !== undefined && { parameters }),
    'x-codeSamples': [{ ...sample, source: String(sample!.source).replace(documented, example) }, ...samples],
  };
}
