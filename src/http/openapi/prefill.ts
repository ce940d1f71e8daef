import { examplePath } from './examples.ts';
import type { Json } from './json.ts';
import { exampleName } from './parameters.ts';

// What Swagger UI's "Try it out" fills in, and what it offers instead. Swagger UI
// fills each parameter with its `example`, else the first of its named `examples`, so
// examples that are each fine alone (a cursor, `period` beside `year`, `state=Nevada`
// beside `country=France`, a filter of another metric) made a request that answered
// 400. So only the parameters of the operation's example request (`x-codeSamples`,
// which test/portman.test.ts sends) have an `example`, that request's value; every
// other parameter's named `examples` start with "not sent": "Try it out" then
// "Execute" sends that very request, and the other examples wait in the drop-down
// (docs/api.md "OpenAPI"). OpenAPI lets a parameter have `example` or `examples`, not
// both, and a named example would not be filled in before a schema's default or an
// enum's first value, so the other examples of a parameter the request sends are its
// `x-examples`, in the same form.
//
// Release ids are the serving server's (docs.ts): `release` names its newest
// release, `as_of` the instants its two newest were published, and /v1/revisions compares its two newest (with one release, that release
// with itself: an empty page rather than a 400 for a `from` it does not have).

/** The releases the document's examples name: the newest published, and the one before it (the newest again when there is one). */
export interface ReleaseExamples {
  readonly latest: string;
  readonly previous: string;
  /** When each was first published (the publication log): the `as_of` examples, which then read each. */
  readonly latestAt: string;
  readonly previousAt: string;
}

/**
 * The ids docs/openapi.json names: those of the test suite's two-release data
 * (test/helpers/service.ts), so the committed document is what such a server serves.
 * Options and routes write their examples with them; a server replaces them with its own.
 */
export const DOCUMENTED_RELEASES: ReleaseExamples = {
  latest: '2026-12',
  previous: '2026-11',
  latestAt: '2026-12-01T09:00:00Z',
  previousAt: '2026-11-02T09:00:00Z',
};

/** The parameters whose values are release ids. */
const RELEASE_PARAMETERS = new Set(['release', 'from', 'to', 'as_of']);

/** A documented release id, or instant one was published, as `releases` names it. */
const servedId = (id: string, releases: ReleaseExamples) =>
  id === DOCUMENTED_RELEASES.latest
    ? releases.latest
    : id === DOCUMENTED_RELEASES.previous
      ? releases.previous
      : id === DOCUMENTED_RELEASES.latestAt
        ? releases.latestAt
        : id === DOCUMENTED_RELEASES.previousAt
          ? releases.previousAt
          : id;

/** `path?query` with each release parameter's value as `releases` names it. */
function withReleases(pathAndQuery: string, releases: ReleaseExamples): string {
  const url = new URL(pathAndQuery, 'http://x');
  for (const name of RELEASE_PARAMETERS)
    if (url.searchParams.has(name)) url.searchParams.set(name, servedId(url.searchParams.get(name)!, releases));
  // URLSearchParams writes ':' and ',' escaped; the examples are read by people, so keep them as written.
  return `${url.pathname}${url.search.replaceAll('%3A', ':').replaceAll('%2C', ',')}`;
}

const NOT_SENT = 'not sent';
const NOT_SENT_EXAMPLE = { summary: 'Not sent: the pre-filled request leaves it out; pick an example below to send it' };

/** Why a parameter is not filled in, shown beside its named examples. */
function aside(parameter: Json): string {
  const metrics = parameter['x-metrics'] as string[] | undefined;
  if (metrics) return `a filter of metric ${metrics.join(', ')}`;
  if (parameter.name === 'cursor') return "the shape of a cursor: send the previous page's `pagination.cursor` instead";
  if (parameter.in === 'header') return `the ${parameter.name} header`;
  return 'not in the pre-filled request';
}

/** A parameter's named examples naming `releases`, each with its summary; the same value twice is one. */
function namedExamples(parameter: Json, releases: ReleaseExamples): [string, Json][] {
  const name = parameter.name as string;
  const named = new Map<string, Json>();
  for (const example of Object.values(parameter.examples as Record<string, Json>)) {
    const value = RELEASE_PARAMETERS.has(name) ? servedId(example.value as string, releases) : example.value;
    const request = example['x-request'] as string | undefined;
    named.set(exampleName(name, value), {
      summary: `${exampleName(name, value)}: ${aside(parameter)}`,
      value,
      ...(request !== undefined && { 'x-request': withReleases(request, releases) }),
    });
  }
  return [...named];
}

/** `operation` with its example request and parameter examples as Swagger UI should fill them, naming `releases`. */
export function prefill(operation: Json, releases: ReleaseExamples): Json {
  const documented = examplePath(operation);
  if (documented === undefined) return operation;
  const example = withReleases(documented, releases);
  const query = new URL(example, 'http://x').searchParams;
  const parameters = ((operation.parameters as Json[] | undefined) ?? []).map((parameter) => {
    const name = parameter.name as string;
    const named = namedExamples(parameter, releases);
    if (parameter.in === 'query' && query.has(name)) {
      const sent = query.getAll(name);
      const items = (parameter.schema as Json).type === 'array' ? ((parameter.schema as Json).items as Json) : (parameter.schema as Json);
      const typed = items.type === 'integer' ? sent.map(Number) : items.type === 'boolean' ? sent.map((text) => text === 'true') : sent;
      const value = parameter.style === 'form' ? typed : typed[0];
      const { examples: _examples, ...rest } = parameter;
      const others = named.filter(([n]) => n !== exampleName(name, value));
      return { ...rest, example: value, ...(others.length > 0 && { 'x-examples': Object.fromEntries(others) }) };
    }
    // A required parameter left out would be filled by nothing and refused: the example request must name it.
    if (parameter.required) throw new Error(`${operation.operationId}: the example request ${example} does not send required ${name}`);
    // Swagger UI fills in the first of `examples`: the first says "not sent" and has no value.
    return { ...parameter, examples: Object.fromEntries([[NOT_SENT, NOT_SENT_EXAMPLE], ...named]) };
  });
  const [sample, ...samples] = operation['x-codeSamples'] as Json[];
  return {
    ...operation,
    ...(operation.parameters !== undefined && { parameters }),
    'x-codeSamples': [{ ...sample, source: String(sample!.source).replace(documented, example) }, ...samples],
  };
}
