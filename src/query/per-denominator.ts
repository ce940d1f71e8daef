import { type DatasetDef, findDataset } from '../registry.ts';
import type { AggregateTables } from '../store/aggregate-tables.ts';
import type { AggregateSource, Groups, MetricTotals } from '../store/aggregation.ts';
import { alignedTotals, type DenominatorTable, denominatorTable, translateCodes } from '../store/denominators.ts';
import type { Allowed, Level } from './aggregate-groups.ts';
import { type LevelDenominators, levelDenominators, matchKeys, type Unmatched, unmatchedKeys } from './derived.ts';
import type { DenominatorEntry as PerPlan } from './options/derived.ts';

// Where a `per` ratio's denominators come from: lined up row for row with the
// numerator's tables when the denominator dataset has the very same rows (turnover
// beside ggr: summed in the same scan), else looked up by key in a table of the
// denominator's sums. Either way the scan is told what to add, and its groups are
// matched to their denominators after.

/** A `per` denominator: what the scan adds for it, and how its groups find theirs. */
export interface Denominator {
  /** Key dimensions the scan groups by besides group_by, so each key is looked up on its own. */
  readonly fineDims: readonly number[];
  /** The denominator's totals lined up with a source's rows, summed into the scan's own groups. */
  readonly aligned: ((source: AggregateSource) => MetricTotals) | undefined;
  /** The scan's groups (by group_by, then fineDims; `targetOf` gives each one's detail group) matched to the denominator. */
  match(scanned: Groups, targetOf: Int32Array, detail: Level): Matched;
}

/** A denominator matched to an aggregate's groups. */
export interface Matched {
  readonly unmatched: Unmatched;
  /** Each group's denominator in `level`. */
  level(level: Level): LevelDenominators;
}

/** Summed in the scan itself: every row has its denominator, and each group's is the sum beside its own. */
function alignedDenominator(aligned: (source: AggregateSource) => MetricTotals): Denominator {
  const matched: Matched = {
    unmatched: { count: 0, keys: [] },
    level: (level) => ({ sums: level.groups.aligned[0]!, unmatched: new Uint8Array(level.groups.count) }),
  };
  return { fineDims: [], aligned, match: () => matched };
}

/**
 * Looked up in `table` by key: `keys` are the key dimensions (the numerator's indexes,
 * in the registry's order, named `names`) and `translate` each one's codes into the
 * table's. A key dimension neither grouped nor scanned is fixed to the one code `read`
 * allows there.
 */
function keyedDenominator(
  tables: AggregateTables,
  table: DenominatorTable,
  keys: readonly number[],
  names: readonly string[],
  translate: readonly Int32Array[],
  groupBy: readonly number[],
  read: Allowed,
): Denominator {
  const fineDims = keys.filter((d) => !groupBy.includes(d) && read.get(d)?.size !== 1).sort((a, b) => a - b);
  const match = (scanned: Groups, targetOf: Int32Array, detail: Level): Matched => {
    const width = groupBy.length + fineDims.length;
    const at = keys.map((d) => [...groupBy, ...fineDims].indexOf(d));
    const fixed = keys.map((d) => [...(read.get(d) ?? [])][0] ?? -1);
    const codesOf = (f: number) => at.map((p, i) => (p >= 0 ? scanned.codes[f * width + p]! : fixed[i]!));
    const fine = matchKeys(scanned.count, targetOf, codesOf, translate, table);
    const codeValue = (i: number, code: number) => tables.dictionaries[keys[i]!]!.values[code]!;
    return {
      unmatched: unmatchedKeys(detail, fine, table.count, names, codeValue),
      level: (level) => levelDenominators(level, fine, table),
    };
  };
  return { fineDims, aligned: undefined, match };
}

/** `per`'s denominator for an aggregate of `def` grouped by `groupBy` (indexes) reading `read`; `otherTables` are its dataset's. */
export async function denominatorOf(
  def: DatasetDef,
  tables: AggregateTables,
  otherTables: AggregateTables,
  per: PerPlan,
  groupBy: readonly number[],
  read: Allowed,
): Promise<Denominator> {
  const other = findDataset(per.dataset, 'financial')!;
  const metric = other.metrics.indexOf(per.metric);
  const everyDimension =
    per.keys.length === def.dimensions.length &&
    other.dimensions.length === def.dimensions.length &&
    def.dimensions.every((d, i) => other.dimensions[i] === d);
  const aligned = everyDimension ? alignedTotals(tables, otherTables, metric) : undefined;
  if (aligned) return alignedDenominator(aligned);
  const table = await denominatorTable(other, otherTables, per.keys, per.metric);
  const translate = per.keys.map((d) => translateCodes(tables, def, otherTables, d));
  const keys = per.keys.map((d) => def.dimensions.indexOf(d));
  return keyedDenominator(tables, table, keys, per.keys, translate, groupBy, read);
}
