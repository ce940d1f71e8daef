import { ENDPOINTS, type Endpoint } from '../views.ts';

// The URL is the page's state: /explore/<endpoint>?<that endpoint's own query string>
// shows what /v1/<endpoint>?<the same query> answers, and /explore alone the catalog.

export interface View {
  readonly endpoint: Endpoint | undefined;
  readonly params: URLSearchParams;
}

/** The view a page URL names (`location` by default). */
export function currentView(at: { pathname: string; search: string } = location): View {
  const name = at.pathname.replace(/^\/explore\/?/, '').replace(/\/$/, '');
  const endpoint = (ENDPOINTS as readonly string[]).includes(name) ? (name as Endpoint) : undefined;
  return { endpoint, params: new URLSearchParams(at.search) };
}

export const pageUrl = (endpoint: Endpoint | undefined, params: URLSearchParams = new URLSearchParams()) => {
  const query = params.toString();
  return `/explore${endpoint ? `/${endpoint}` : ''}${query ? `?${query}` : ''}`;
};

export const apiPath = (endpoint: Endpoint, params: URLSearchParams) => {
  const query = params.toString();
  return `/v1/${endpoint}${query ? `?${query}` : ''}`;
};

/** The parameter naming the dataset: `dataset` on /v1/reference, `metric` elsewhere. */
export const datasetParam = (endpoint: Endpoint) => (endpoint === 'reference' ? 'dataset' : 'metric');

let onNavigate: () => void = () => {};
export const setNavigateHandler = (handler: () => void) => {
  onNavigate = handler;
};

/**
 * Shows `url`. Another view (endpoint, dataset or page) is a new history entry, so Back
 * returns to the view before; a changed field of the same view replaces the current
 * entry, so Back does not step back through each filter one at a time.
 */
export function navigate(url: string): void {
  if (url === location.pathname + location.search) return;
  if (sameView(currentView(), currentView(new URL(url, location.href)))) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  onNavigate();
}

/** Whether two page states are one view: the same endpoint, dataset and page cursor. */
function sameView(a: View, b: View): boolean {
  if (a.endpoint !== b.endpoint) return false;
  const held = (v: View) => (v.endpoint ? [v.params.getAll(datasetParam(v.endpoint)), v.params.getAll('cursor')] : []);
  return JSON.stringify(held(a)) === JSON.stringify(held(b));
}
