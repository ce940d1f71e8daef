import { ENDPOINTS, type Endpoint } from '../views.ts';
import type { OperationParameter } from './api.ts';
import type { Operations } from './openapi.ts';
import { datasetParam, pageUrl, type View } from './url-state.ts';

// A link from one view to another keeps the filters that apply: the view's dataset,
// where the target takes it, and those of its parameters the target's operation in
// /openapi.json takes for that dataset (a dimension filter for the datasets of its
// `x-metrics`). The rest is dropped: it would be refused there.

/**
 * A page's own position and size, kept by no other view: a cursor is bound to the query
 * it came from, and `limit` counts rows on one endpoint and groups on another.
 */
const PAGE_BOUND = new Set(['cursor', 'limit', 'format']);

/** The URL of `target` carrying what applies of `from`; the target alone when the dataset does not. */
export function carriedUrl(from: View, target: Endpoint, doc: Operations, extra: Record<string, string> = {}): string {
  const parameters: readonly OperationParameter[] = doc.paths[`/v1/${target}`]?.get.parameters ?? [];
  const dataset = from.endpoint && from.params.get(datasetParam(from.endpoint));
  const name = datasetParam(target);
  const query = new URLSearchParams();
  if (dataset && parameters.find((p) => p.name === name)?.schema?.enum?.includes(dataset)) {
    query.set(name, dataset);
    const taken = new Set(
      parameters
        .filter((p) => p.in === 'query' && !PAGE_BOUND.has(p.name) && p.name !== name && (p['x-metrics'] ?? [dataset]).includes(dataset))
        .map((p) => p.name),
    );
    for (const [key, value] of from.params) if (taken.has(key) && !(key in extra)) query.append(key, value);
  }
  for (const [key, value] of Object.entries(extra)) query.set(key, value);
  return pageUrl(target, query);
}

/** Points each view link of `nav` (`data-view`) at its view, with what applies of `from`. */
export function updateViewLinks(nav: HTMLElement, from: View, doc: Operations): void {
  for (const link of nav.querySelectorAll<HTMLAnchorElement>('a[data-view]')) {
    const target = link.dataset.view as Endpoint;
    if ((ENDPOINTS as readonly string[]).includes(target)) link.setAttribute('href', carriedUrl(from, target, doc));
  }
}
