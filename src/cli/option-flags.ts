import { toJsonSchema } from '@valibot/to-json-schema';
import { type Command, Option } from 'commander';
import * as v from 'valibot';
import { helpLine, type Options, type QueryOption, repeats } from '../query/options/option.ts';
import type { DatasetDef } from '../registry.ts';

// An endpoint's own options as the query CLI's flags, one each, from the option lists
// (src/query/options/): `group_by` is `--group-by`, its help the option's first
// sentence, its choices the values it takes for this dataset. The server checks the
// values and names a conflict, so they are passed on as typed.

/** What a flag's value is, in its help. */
const PLACEHOLDERS: Readonly<Record<string, string>> = {
  dimensions: '<dimension>',
  'dimension-or-all': '<dimension>',
  measures: '<metric:fn>',
  denominator: '<metric>',
  having: '<key.op.number>',
  span: '<from:to>',
  text: '<key>',
};

export const flagOf = (name: string) => `--${name.replaceAll('_', '-')}`;

/** Where a JSON schema of a single or repeated parameter lists its closed set. */
interface Closed {
  readonly enum?: readonly string[];
  readonly items?: Closed;
  readonly anyOf?: readonly Closed[];
}

/** The values `option` takes for `def`: its own list, or its schema's closed set. */
function choicesOf(option: QueryOption, def: DatasetDef): readonly string[] | undefined {
  if (option.values) return option.values(def);
  const property = (toJsonSchema(v.object({ x: option.schema }), { errorMode: 'ignore' }) as { properties: { x: Closed } }).properties.x;
  return property.enum ?? property.items?.enum ?? property.anyOf?.find((p) => p.items?.enum)?.items?.enum;
}

/** The endpoint's own options (those with a key of their own) of `def`, each as a flag; one whose values `def` has none of is left out. */
export function addOptionFlags(command: Command, options: Options, def: DatasetDef): Command {
  for (const [name, option] of Object.entries(options)) {
    if (option.key === 'scope') continue;
    const choices = choicesOf(option, def);
    if (choices?.length === 0) continue;
    if (option.client === 'flag') {
      command.option(flagOf(name), helpLine(option));
      continue;
    }
    const flag = new Option(`${flagOf(name)} ${PLACEHOLDERS[option.client ?? ''] ?? '<value>'}`, helpLine(option));
    if (choices) flag.choices(choices);
    if (repeats(option)) flag.argParser((text: string, previous: string[] = []) => [...previous, text]);
    command.addOption(flag);
  }
  return command;
}

/** The flags given of the endpoint's own options, as the typed client's query takes them. */
export function optionsQuery(options: Options, flags: Record<string, unknown>): Record<string, unknown> {
  const query: Record<string, unknown> = {};
  for (const [name, option] of Object.entries(options)) {
    if (option.key === 'scope') continue;
    const value = flags[new Option(flagOf(name)).attributeName()];
    // A switch left off is not sent, as the option's default.
    if (value !== undefined && value !== false) query[name] = value;
  }
  return query;
}
