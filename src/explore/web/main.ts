import 'uplot/dist/uPlot.min.css';
import './style.css';
import { ENDPOINTS } from '../views.ts';
import { forgetKey, onAnswered, readKey, saveKey } from './api.ts';
import { renderCatalog } from './catalog.ts';
import { TABLE_ID } from './chart.ts';
import { announce, h } from './dom.ts';
import { rememberFocus, restoreFocus } from './focus-keeper.ts';
import { operations } from './openapi.ts';
import { renderQuery } from './query-view.ts';
import { currentView, navigate, pageUrl, setNavigateHandler } from './url-state.ts';
import { hideUsage, refreshUsage, usagePanel } from './usage-panel.ts';
import { updateViewLinks } from './view-links.ts';

// The Explore page: the key form, the links to each view, and the view the URL names.

const keyInput = h('input', { id: 'api-key', type: 'password', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'key-help' });
const view = h('main', { id: 'view', tabindex: '-1' });
/** First in the tab order, seen when focused: to the table and the chart, shown when the view has them. */
const skipLinks = h(
  'nav',
  { class: 'skip', 'aria-label': 'Skip links' },
  h('a', { href: `#${TABLE_ID}`, hidden: true }, 'Skip to the table'),
  h('a', { href: '#chart', hidden: true }, 'Skip to the chart'),
);
const showSkipLinks = () => {
  for (const link of skipLinks.querySelectorAll('a')) link.hidden = !document.getElementById(link.hash.slice(1));
};

function shell(): void {
  const keyForm = h(
    'form',
    { class: 'key', 'aria-label': 'Your key' },
    h('label', { for: 'api-key' }, 'API key'),
    keyInput,
    h('button', { type: 'submit' }, 'Use key'),
    h('button', { type: 'button', id: 'forget-key', class: 'secondary' }, 'Forget key'),
    h('p', { id: 'key-help', class: 'muted' }, 'Kept in this tab only (sessionStorage), sent as the x-api-key header to /v1.'),
  );
  keyForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const typed = keyInput.value.trim();
    if (typed) saveKey(typed);
    // Out of the DOM once saved: the input shows only that a key is held.
    keyInput.value = '';
    keyInput.placeholder = readKey() ? 'saved for this tab' : '';
    announce(readKey() ? 'Key saved for this tab.' : 'No key entered.');
    void show();
  });
  keyForm.querySelector('#forget-key')!.addEventListener('click', () => {
    forgetKey();
    hideUsage();
    keyInput.value = '';
    keyInput.placeholder = '';
    announce('Key forgotten.');
    keyInput.focus();
  });
  const links = h(
    'nav',
    { 'aria-label': 'Views' },
    h('a', { href: pageUrl(undefined) }, 'Catalog'),
    ...ENDPOINTS.map((e) => h('a', { href: pageUrl(e), 'data-view': e }, e[0]!.toUpperCase() + e.slice(1))),
  );
  // Links to another view change the URL in place: the page stays, with its key. A link
  // within the page (the skip links, the chart's to its table) moves focus to its target,
  // and leaves the URL, which is the view's state, as it is.
  document.addEventListener('click', (event) => {
    const link = (event.target as HTMLElement).closest('a');
    const href = link?.getAttribute('href') ?? '';
    if (href.startsWith('#')) {
      event.preventDefault();
      const target = document.getElementById(href.slice(1));
      target?.focus();
      target?.scrollIntoView({ block: 'start' });
      return;
    }
    if (!href.startsWith('/explore') || event.ctrlKey || event.metaKey || event.shiftKey) return;
    event.preventDefault();
    navigate(href);
  });
  document.body.append(
    skipLinks,
    h(
      'header',
      {},
      h('h1', {}, 'Explore'),
      h('p', { class: 'muted' }, 'Data Query Service: every view is a /v1 request.'),
      keyForm,
      usagePanel,
      links,
    ),
    h('p', { id: 'status', role: 'status', 'aria-live': 'polite', class: 'muted' }),
    view,
  );
}

/** The view links carry what applies of the view shown (view-links.ts); without /openapi.json they stay bare. */
async function pointLinks(): Promise<void> {
  const nav = document.querySelector<HTMLElement>('nav[aria-label="Views"]');
  const doc = await operations().catch(() => ({ paths: {} }));
  if (nav) updateViewLinks(nav, currentView(), doc);
}

let generation = 0;
async function show(): Promise<void> {
  const mine = ++generation;
  const { endpoint, params } = currentView();
  const fresh = h('div');
  const stale = () => mine !== generation;
  rememberFocus(view);
  void pointLinks();
  if (!readKey()) {
    view.replaceChildren(h('p', {}, 'Type your API key above to see the data.'));
    showSkipLinks();
    keyInput.focus();
    return;
  }
  keyInput.removeAttribute('aria-invalid');
  view.replaceChildren(h('p', { 'aria-busy': 'true' }, 'Loading…'));
  if (endpoint) await renderQuery(fresh, endpoint, params, stale);
  else await renderCatalog(fresh, stale);
  if (stale()) return;
  view.replaceChildren(fresh);
  showSkipLinks();
  restoreFocus();
  // Again once shown: the view may have added a parameter it picked for you (unit-default.ts).
  void pointLinks();
}

shell();
onAnswered(refreshUsage);
keyInput.placeholder = readKey() ? 'saved for this tab' : '';
setNavigateHandler(() => void show());
addEventListener('popstate', () => void show());
void show();
