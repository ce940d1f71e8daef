import * as v from 'valibot';
import { UnknownDatasetError, UnknownMetricError } from '../../errors/index.ts';
import { DATASETS, type DatasetDef, type DatasetKind, findDataset } from '../../registry.ts';
import { alternatives, closest } from '../suggest.ts';
import { single } from './params.ts';

// The parameter naming the dataset (`metric` on the financial endpoints, `dataset` on
// /v1/reference), and the errors that say what to send instead: the spec's texts
// (7.2), then a hint where the spec leaves room for one (docs/api.md "Error codes").

/** The names of the datasets of `kind`, in catalog order. */
export const namesOf = (kind: DatasetKind) => DATASETS.filter((d) => d.kind === kind).map((d) => d.name);

/**
 * Required, given once. Missing or empty, its field message keeps valibot's (spec 7.2:
 * "a string was expected and none was received") and adds what to send.
 */
export function datasetParam(name: 'metric' | 'dataset', kind: DatasetKind) {
  const help = (issue: v.BaseIssue<unknown>) => `${issue.message}: ${name} is required, one of ${namesOf(kind).join(', ')}`;
  return single(v.pipe(v.string(help), v.minLength(1, help)));
}

/** Where a metric name is used: the aggregate names it again as its measure. */
export type MetricUse = 'rows' | 'aggregate';

/** The unknown-metric error for `metric`, its hint naming the dataset it belongs to, or the name meant. */
export function unknownMetric(metric: string, use: MetricUse = 'rows'): UnknownMetricError {
  const holder = DATASETS.find((d) => d.kind === 'financial' && d.metrics.includes(metric));
  if (holder)
    return new UnknownMetricError(
      metric,
      `${metric} is a metric of the dataset ${holder.name}: use metric=${holder.name}${use === 'aggregate' ? `&measure=${metric}` : ''}`,
    );
  if (findDataset(metric, 'reference'))
    return new UnknownMetricError(metric, `${metric} is a reference dataset: use GET /v1/reference?dataset=${metric}`);
  const near = closest(metric, namesOf('financial'));
  return new UnknownMetricError(metric, near.length > 0 ? `Did you mean ${alternatives(near)}?` : undefined);
}

/** The financial dataset `metric` names, or the unknown-metric error. */
export function financialDataset(metric: string, use: MetricUse = 'rows'): DatasetDef {
  const def = findDataset(metric, 'financial');
  if (!def) throw unknownMetric(metric, use);
  return def;
}

/** The unknown-dataset error of /v1/reference, its hint pointing a financial dataset to /v1/financials. */
export function unknownDataset(dataset: string): UnknownDatasetError {
  if (findDataset(dataset, 'financial'))
    return new UnknownDatasetError(dataset, `${dataset} is a financial dataset: use GET /v1/financials?metric=${dataset}`);
  const near = closest(dataset, namesOf('reference'));
  return new UnknownDatasetError(dataset, near.length > 0 ? `Did you mean ${alternatives(near)}?` : undefined);
}
