import * as v from 'valibot';
import { HAVING_OPS, type Having, type HavingOp } from '../../query/derived-plan.ts';
import { repeatable } from './params.ts';

// `having=<key>.<op>.<number>` (PostgREST's operator words), repeatable: the form is
// checked here; whether the key is one of the answer's is the plan's to say.

const HAVING = new RegExp(`^([A-Za-z0-9_]+)\\.(${HAVING_OPS.join('|')})\\.(-?(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][-+]?\\d+)?)$`);

export const HAVING_FORMAT = `Expected <key>.<op>.<number> with op one of ${HAVING_OPS.join(', ')}, e.g. ggr_sum.gt.1e9`;

export const havingParam = v.optional(
  v.pipe(
    repeatable(v.pipe(v.string(), v.regex(HAVING, HAVING_FORMAT))),
    v.transform((texts) =>
      texts.map((text): Having => {
        const [, key, op, number] = HAVING.exec(text)!;
        return { text, key: key!, op: op as HavingOp, value: Number(number) };
      }),
    ),
    v.check((conditions) => conditions.every((h) => Number.isFinite(h.value)), 'Expected a number within the range of a double'),
  ),
  [],
);
