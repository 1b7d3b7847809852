/**
 * A strict JSON-schema validator for the provider and sign-in routes. Fastify's
 * default Ajv options coerce types ("1" -> 1, 0.01 -> "0.01") and silently drop
 * unknown properties; for an API that configures money and secrets we want
 * wrong types and unknown fields rejected with 400 instead. Query strings are
 * always strings on the wire, so they alone keep coercion.
 *
 * No string may hold a NUL: Postgres refuses it in text (error 22021), so one
 * `\u0000` in a name, a path parameter or a query would otherwise be a 500.
 */
import { Ajv } from 'ajv';
import type { FastifyInstance } from 'fastify';
import { invalid } from '../../providers/rules.ts';

const strict = new Ajv({ coerceTypes: false, useDefaults: true, removeAdditional: false, allErrors: false });
const query = new Ajv({ coerceTypes: true, useDefaults: true, removeAdditional: false, allErrors: false });

/**
 * Whether a NUL appears in any string (or key) of a parsed JSON value. Walked with its own
 * stack: a body may nest deeper than recursion goes (a 100,000-deep array is 200 KB).
 */
export function containsNul(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const v = pending.pop();
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return true;
    } else if (v !== null && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        if (k.includes('\u0000')) return true;
        pending.push(child);
      }
    }
  }
  return false;
}

/** Installs the strict validator on an encapsulated scope (never on the root app). */
export function useStrictValidation(scope: FastifyInstance): void {
  scope.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'querystring' ? query : strict).compile(schema as object),
  );
  // preValidation: after the body is parsed, also on routes without a schema.
  scope.addHook('preValidation', async (request) => {
    for (const [part, value] of [
      ['params', request.params],
      ['querystring', request.query],
      ['body', request.body],
    ] as const) {
      if (containsNul(value)) throw invalid(`${part} must not contain NUL characters`, 'nul_character');
    }
  });
}

/** A JSON object schema that rejects unknown properties. */
export function objectSchema(
  properties: Record<string, object>,
  required: string[] = [],
  extra: Record<string, unknown> = {},
): object {
  return { type: 'object', properties, required, additionalProperties: false, ...extra };
}
