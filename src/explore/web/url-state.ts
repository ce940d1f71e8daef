import { ENDPOINTS, type Endpoint } from '../views.ts';

// The URL is the page's state: /explore/<endpoint>?<that endpoint's own query string>
// shows what /v1/<endpoint>?<the same query> answers, and /explore alone the catalog.

export interface View {
  readonly endpoint: Endpoint | undefined;
  readonly params: URLSearchParams;
}

export function currentView(): View {
  const name = location.pathname.replace(/^\/explore\/?/, '').replace(/\/$/, '');
  const endpoint = (ENDPOINTS as readonly string[]).includes(name) ? (name as Endpoint) : undefined;
  return { endpoint, params: new URLSearchParams(location.search) };
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

/** Shows another view: a new history entry, so Back returns to the one before. */
export function navigate(url: string): void {
  if (url === location.pathname + location.search) return;
  history.pushState(null, '', url);
  onNavigate();
}
