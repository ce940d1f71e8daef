import { ApiFailure, getJson } from './api.ts';
import { h } from './dom.ts';

// The key's usage beside the key form: what is left of the limits a page's requests
// spend (GET /v1/usage, which counts against none of them). Refreshed after answers:
// at most one request per answer, and while one is under way, answers that arrive
// ask for one more after it, not one each.

interface Limit {
  readonly limit: number;
  readonly remaining: number | null;
}

interface UsageNow {
  readonly limits: Record<'minute' | 'day' | 'exports_day' | 'heavy_seconds_minute', Limit>;
}

const SHOWN = [
  ['minute', 'Requests this minute'],
  ['day', 'Requests today (UTC)'],
  ['exports_day', 'Exports today'],
  ['heavy_seconds_minute', 'Heavy seconds this minute'],
] as const;

export const usagePanel = h('section', { id: 'usage', class: 'usage muted', 'aria-label': 'Your usage', hidden: true });

const number = (n: number) => n.toLocaleString('en', { maximumFractionDigits: 1 });
const left = ({ limit, remaining }: Limit) => (remaining === null ? 'not known now' : `${number(remaining)} of ${number(limit)} left`);

async function load(): Promise<void> {
  try {
    const { limits } = await getJson<UsageNow>('/v1/usage');
    usagePanel.replaceChildren(h('dl', {}, ...SHOWN.flatMap(([name, label]) => [h('dt', {}, label), h('dd', {}, left(limits[name]))])));
    usagePanel.hidden = false;
  } catch (err) {
    // The usage guard's 429: what is shown stays, and the next answer asks again.
    if (err instanceof ApiFailure && err.status === 429) return;
    usagePanel.hidden = true;
  }
}

let asking: Promise<void> | undefined;
let again = false;

/** Asks for the key's usage once now, or once more after the request under way. */
export function refreshUsage(): void {
  if (asking) {
    again = true;
    return;
  }
  asking = load().finally(() => {
    asking = undefined;
    if (!again) return;
    again = false;
    refreshUsage();
  });
}

/** The key forgotten: nothing to show. */
export function hideUsage(): void {
  usagePanel.hidden = true;
  usagePanel.replaceChildren();
}
