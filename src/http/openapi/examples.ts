import type { Json } from './json.ts';

// Each operation's example request, as curl: Swagger UI fills in its parameters
// (prefill.ts), generated tests send it, and README.md writes requests the same way.

/**
 * `x-codeSamples` (the extension Redoc, Scalar and Stoplight show) with one request
 * that works as it is, as README.md writes them: `$BASE` the service's address and
 * `$KEY` an API key. The document's own descriptions repeat it (document.ts).
 */
export function exampleRequest(pathAndQuery: string, keyed = true): Json[] {
  return [{ lang: 'Shell', label: 'curl', source: `curl -s "$BASE${pathAndQuery}"${keyed ? ' -H "x-api-key: $KEY"' : ''}` }];
}

/** The path and query of an operation's example request (`exampleRequest`), as its description and the tests read it. */
export function examplePath(operation: Json): string | undefined {
  const [sample] = (operation['x-codeSamples'] as { source: string }[] | undefined) ?? [];
  return sample && /"\$BASE([^"]+)"/.exec(sample.source)?.[1];
}
