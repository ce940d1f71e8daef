import { PAGE_FORMATS } from '../respond/negotiate.ts';
import { datasetParam } from './metric.ts';
import { cursorParam, formatParam, limitParam, periodParam } from './params.ts';

// The query parameters every paged endpoint shares, declared once for their schemas.

/** How many rows a page holds (`limit`, by default `limit`), where it starts, and in which format. */
export const pageParams = (limit: number) => ({ limit: limitParam(limit), cursor: cursorParam, format: formatParam(PAGE_FORMATS) });

/** A page of a financial dataset's rows or groups: which dataset and which years, then pageParams. */
export const financialPageParams = (limit: number) => ({
  metric: datasetParam('metric', 'financial'),
  period: periodParam,
  ...pageParams(limit),
});
