/**
 * A strict JSON-schema validator for the provider and sign-in routes. Fastify's
 * default Ajv options coerce types ("1" -> 1, 0.01 -> "0.01") and silently drop
 * unknown properties; for an API that configures money and secrets we want
 * wrong types and unknown fields rejected with 400 instead. Query strings are
 * always strings on the wire, so they alone keep coercion.
 */
import { Ajv } from 'ajv';
import type { FastifyInstance } from 'fastify';

const strict = new Ajv({ coerceTypes: false, useDefaults: true, removeAdditional: false, allErrors: false });
const query = new Ajv({ coerceTypes: true, useDefaults: true, removeAdditional: false, allErrors: false });

/** Installs the strict validator on an encapsulated scope (never on the root app). */
export function useStrictValidation(scope: FastifyInstance): void {
  scope.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'querystring' ? query : strict).compile(schema as object),
  );
}

/** A JSON object schema that rejects unknown properties. */
export function objectSchema(
  properties: Record<string, object>,
  required: string[] = [],
  extra: Record<string, unknown> = {},
): object {
  return { type: 'object', properties, required, additionalProperties: false, ...extra };
}
