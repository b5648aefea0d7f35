/**
 * The small adapter that lets Fastify routes declare their body, querystring and params as zod
 * schemas (the contract's own, or derived from them): Fastify compiles each route's schema once and
 * calls the validator before the handler; a failure becomes a 400 whose `where` names the field.
 * The type provider gives handlers the parsed types; `fromQueryString` reads a contract schema's
 * numbers out of query-string text, so the contract's ranges and messages apply unchanged.
 * Runs on: Node (core).
 */
import type { FastifySchemaCompiler, FastifyTypeProvider } from 'fastify';
import { z } from 'zod';
import { PanoptesError } from '../domain.js';
import { firstIssuePath, formatZodIssues } from '../validation.js';

/** Route schemas are zod schemas; this compiles them for Fastify. */
export const zodValidatorCompiler: FastifySchemaCompiler<z.ZodType> = ({ schema, httpPart }) => {
  return (data: unknown) => {
    const parsed = schema.safeParse(data);
    if (parsed.success) return { value: parsed.data };
    const part = httpPart ?? 'request';
    // `where` is the field as the client wrote it; the whole part when no one field is at fault.
    const where = firstIssuePath(parsed.error) ?? part;
    return { error: new PanoptesError('invalid_input', `${part}: ${formatZodIssues(parsed.error)}`, { where }) };
  };
};

/** Handlers see what the zod schemas produce. */
export interface ZodTypeProvider extends FastifyTypeProvider {
  validator: this['schema'] extends z.ZodType ? z.output<this['schema']> : unknown;
  serializer: this['schema'] extends z.ZodType ? z.input<this['schema']> : unknown;
}

function isNumber(schema: z.ZodType): boolean {
  const inner = schema instanceof z.ZodOptional ? (schema.unwrap() as z.ZodType) : schema;
  return inner instanceof z.ZodNumber;
}

/**
 * A contract object schema read from a query string: its number fields are parsed from text
 * (an empty value counts as absent; text that is not a number fails the contract's own check).
 */
export function fromQueryString<T extends z.ZodObject>(schema: T) {
  const numericKeys = new Set(
    Object.entries(schema.shape as Record<string, z.ZodType>)
      .filter(([, field]) => isNumber(field))
      .map(([key]) => key),
  );
  return z.preprocess((query) => {
    if (typeof query !== 'object' || query === null) return query;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(query)) {
      if (typeof value === 'string' && value.trim() === '') continue;
      out[key] = typeof value === 'string' && numericKeys.has(key) ? Number(value) : value;
    }
    return out;
  }, schema);
}
