import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { openApiText } from '../../src/http/routes/index.ts';

// Every response a test receives through service.get is checked against the OpenAPI
// document the service serves: its status must be documented for the operation, its
// JSON body must match the documented schema, and documented headers must be present
// (when required) and well-formed. A response the document does not describe fails
// the test that received it.

type Json = Record<string, any>;

export const openApi: Json = JSON.parse(openApiText);

const ajv = new Ajv2020({ strict: false, validateSchema: false, allErrors: true });
addFormats.default(ajv);
ajv.addSchema(openApi, 'openapi');

const compiled = new Map<string, ValidateFunction>();
/** A validator for the schema at `pointer` in the document (a JSON pointer), or for `schema` itself. */
function validator(pointer: string, schema?: Json): ValidateFunction {
  let validate = compiled.get(pointer);
  if (!validate) {
    validate = ajv.compile(schema ?? { $ref: `openapi#${pointer}` });
    compiled.set(pointer, validate);
  }
  return validate;
}

const escapePointerSegment = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');

export interface Received {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: unknown;
}

function check(validate: ValidateFunction, value: unknown, what: string): void {
  if (!validate(value))
    throw new Error(`${what} does not match docs/openapi.json: ${ajv.errorsText(validate.errors, { separator: '; ' })}`);
}

const resolve = (node: Json): Json => (node.$ref ? openApi.components.headers[node.$ref.split('/').pop()] : node);

/** Throws unless `res`, the answer to `method pathAndQuery`, is what the document says. */
export function validateResponse(method: string, pathAndQuery: string, res: Received): void {
  // The router matches paths case-insensitively and with or without a trailing slash.
  const asked = new URL(pathAndQuery, 'http://x').pathname.toLowerCase().replace(/(.)\/$/, '$1');
  const path = Object.keys(openApi.paths).find((p) => p.toLowerCase() === asked) ?? asked;
  const verb = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
  const operation = openApi.paths[path]?.[verb];
  const what = `${method} ${pathAndQuery.length > 120 ? `${pathAndQuery.slice(0, 120)}…` : pathAndQuery} → ${res.status}`;
  const errorSchema = validator('/components/schemas/Error');
  if (!operation) {
    // Outside the document (an unknown path, another method): only a JSON error may come back.
    if (res.status < 400) throw new Error(`${what}: a success for an operation docs/openapi.json does not describe`);
    if (method.toLowerCase() !== 'head') check(errorSchema, res.json, `${what} body`);
    return;
  }
  const pointer = `/paths/${escapePointerSegment(path)}/${verb}/responses/${res.status}`;
  const response = operation.responses[String(res.status)];
  if (!response) throw new Error(`${what}: status ${res.status} is not documented for ${verb.toUpperCase()} ${path}`);
  for (const [name, declared] of Object.entries<Json>(response.headers ?? {})) {
    const header = resolve(declared);
    const value = res.headers[name.toLowerCase()];
    if (value === undefined) {
      if (declared.required || header.required) throw new Error(`${what}: missing documented header ${name}`);
      continue;
    }
    const text = Array.isArray(value) ? value.join(', ') : value;
    const typed = header.schema.type === 'integer' ? (/^-?\d+$/.test(text) ? Number(text) : text) : text;
    check(validator(`header ${name}`, header.schema), typed, `${what} header ${name}`);
  }
  if (res.status === 304 || method.toLowerCase() === 'head') return;
  const type = String(res.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim();
  if (!response.content) return;
  if (!response.content[type])
    throw new Error(`${what}: Content-Type ${type} is not documented (${Object.keys(response.content).join(', ')})`);
  if (type === 'application/json') check(validator(`${pointer}/content/${escapePointerSegment(type)}/schema`), res.json, `${what} body`);
}
