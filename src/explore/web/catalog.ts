import type { CatalogAnswer, ReleaseInfo } from 'data-query-client';
import { getJson } from './api.ts';
import { h } from './dom.ts';
import { showError } from './errors.ts';
import { unitDefault } from './unit-default.ts';
import { pageUrl } from './url-state.ts';

// /explore alone: every dataset of /v1/catalog with its description, metrics and
// dimensions, and the releases /v1/releases lists.

export async function renderCatalog(into: HTMLElement, stale: () => boolean): Promise<void> {
  let catalog: CatalogAnswer;
  let releases: readonly ReleaseInfo[];
  try {
    [catalog, { releases }] = await Promise.all([
      getJson<CatalogAnswer>('/v1/catalog'),
      getJson<{ releases: ReleaseInfo[] }>('/v1/releases'),
    ]);
  } catch (err) {
    if (!stale()) showError(into, err);
    return;
  }
  into.append(h('h2', {}, 'Catalog'));
  for (const d of catalog.datasets) {
    const rows = typeof d.row_count === 'number' ? `${d.row_count.toLocaleString('en')} rows` : '';
    const years = d.first_year ? `, ${d.first_year} to ${d.last_year}` : '';
    // A reference dataset (a lookup table) is the one kind without metrics (src/registry.ts).
    const financial = d.metrics.length > 0;
    const first = financial ? 'financials' : 'reference';
    const param = financial ? 'metric' : 'dataset';
    const query = new URLSearchParams({ [param]: d.name });
    // An aggregate link that answers: in one currency where the metrics mix them.
    const aggregate = new URLSearchParams(query);
    const unit = financial ? unitDefault(catalog, d, aggregate) : undefined;
    if (unit) aggregate.set(...unit);
    into.append(
      h(
        'section',
        { class: 'dataset', 'aria-labelledby': `ds-${d.name}` },
        h('h3', { id: `ds-${d.name}` }, d.name),
        h('p', {}, d.description),
        h(
          'dl',
          {},
          h('dt', {}, 'Metrics'),
          h('dd', {}, d.metrics.join(', ') || 'none (a lookup table)'),
          h('dt', {}, 'Dimensions'),
          h('dd', {}, d.dimensions.join(', ')),
          rows ? h('dt', {}, 'Size') : null,
          rows ? h('dd', {}, rows + years) : null,
        ),
        h(
          'p',
          {},
          h('a', { href: pageUrl(first, query) }, `Rows of ${d.name}`),
          financial ? ' · ' : null,
          financial ? h('a', { href: pageUrl('aggregate', aggregate) }, `Aggregate ${d.name}`) : null,
        ),
      ),
    );
  }
  const table = h(
    'table',
    {},
    h('caption', {}, 'Releases published, newest first'),
    h(
      'thead',
      {},
      h('tr', {}, h('th', { scope: 'col' }, 'Release'), h('th', { scope: 'col' }, 'Published'), h('th', { scope: 'col' }, 'Notes')),
    ),
    h(
      'tbody',
      {},
      ...releases.map((r) =>
        h(
          'tr',
          {},
          h('th', { scope: 'row' }, r.id),
          h('td', {}, r.published_at),
          h('td', {}, [r.current ? 'current' : '', r.synthetic ? 'synthetic sample' : ''].filter(Boolean).join(', ')),
        ),
      ),
    ),
  );
  into.append(h('h2', {}, 'Releases'), table);
}
