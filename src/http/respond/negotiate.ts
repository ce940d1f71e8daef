import Negotiator from 'negotiator';
import { NotAcceptableError } from '../../errors/index.ts';
import { FORMATS, type Format, type FormatName } from '../../render/formats.ts';

// Clients send a handful of distinct Accept values, so each is parsed once per list of
// formats; the bound keeps hostile variety from growing memory.
const chosen = new Map<string, FormatName | null>();
const MAX_REMEMBERED = 256;

/**
 * The format of `offered` an Accept header asks for (RFC 9110 12.5.1, q-values
 * honoured): the first one offered when there is none, it is empty, or it ranks them
 * equally; NotAcceptableError when it rules out every one.
 */
export function negotiate<N extends FormatName>(accept: string, offered: readonly N[]): Format & { readonly name: N } {
  const memo = `${offered.join()}\n${accept}`;
  let name = chosen.get(memo);
  if (name === undefined) {
    const types = offered.map((n) => FORMATS[n].mediaType);
    const type = accept.trim() ? new Negotiator({ headers: { accept } }).mediaType(types) : types[0];
    name = offered.find((n) => FORMATS[n].mediaType === type) ?? null;
    if (chosen.size >= MAX_REMEMBERED) chosen.clear();
    chosen.set(memo, name);
  }
  if (!name) throw notAcceptable(offered);
  return FORMATS[name] as Format & { readonly name: N };
}

/**
 * The format of a response: the one `format=` names (validated against `offered` by the
 * route's schema), which wins over Accept, since a URL is what pandas, R, Excel and a
 * browser build; otherwise the one Accept asks for (`negotiate`).
 */
export function responseFormat<N extends FormatName>(
  accept: string,
  named: N | undefined,
  offered: readonly N[],
): Format & { readonly name: N } {
  return named === undefined ? negotiate(accept, offered) : (FORMATS[named] as Format & { readonly name: N });
}

/** The 406 of an endpoint serving `offered`, naming each format both ways. */
export const notAcceptable = (offered: readonly FormatName[]) =>
  new NotAcceptableError(
    offered.map((n) => FORMATS[n].mediaType),
    offered,
  );
