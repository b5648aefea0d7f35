/**
 * Regular expressions from scoring files (the `regex` rule, a JSON schema's `pattern` and
 * `patternProperties`) run on RE2 (re2js, in pure JavaScript), whose matching time is linear in
 * the answer's length whatever the pattern: `^(a+)+$` cannot hold the event loop the way it holds
 * a backtracking engine. RE2 has no backreferences or lookaround; a pattern using them is refused
 * when the scorer is attached, naming its field. A JSON schema is also bounded in size and depth
 * before it is compiled, since compiling one runs on the main thread.
 * Runs on: Node (core).
 */
import type { Options } from 'ajv';
import { RE2JS } from 're2js';

/** A JSON schema's longest text, as JSON: a large hand-written schema is a few KB. */
export const MAX_SCHEMA_CHARS = 32_000;
/** A JSON schema's deepest nesting of objects and arrays. */
export const MAX_SCHEMA_DEPTH = 32;

/** What the `regex` rule's flags mean to RE2 (`u`: RE2 matches by code point already). */
const FLAGS: Record<string, number> = { i: RE2JS.CASE_INSENSITIVE, m: RE2JS.MULTILINE, s: RE2JS.DOTALL, u: 0 };

/** A compiled pattern with the one operation rules need: does it occur in the text. */
export interface LinearRegex {
  test(text: string): boolean;
}

/** Compiles a JavaScript-syntax pattern for RE2; throws, saying why, a pattern RE2 cannot run. */
export function linearRegex(pattern: string, flags = ''): LinearRegex {
  let bits = 0;
  for (const f of flags) bits |= FLAGS[f] ?? 0;
  try {
    return RE2JS.compile(RE2JS.translateRegExp(pattern), bits);
  } catch (err) {
    const why = (err as Error).message.replace(/^error parsing regexp: /, '');
    throw new Error(`not a valid regular expression for the linear-time engine, which has no backreferences or lookaround: ${why}`);
  }
}

/** Why RE2 cannot run the pattern, or null when it can. */
export function linearRegexProblem(pattern: string, flags = ''): string | null {
  try {
    linearRegex(pattern, flags);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** The engine ajv compiles a schema's patterns with (ajv passes the flag `u`). */
export const schemaRegExp: NonNullable<NonNullable<Options['code']>['regExp']> = Object.assign((pattern: string, flags: string) => linearRegex(pattern, flags), {
  code: 'require("re2js").RE2JS.compile',
});

/** Why a JSON schema is too large or too deep to compile, or null; walked without recursion. */
export function schemaSizeProblem(schema: unknown): string | null {
  const stack: [unknown, number][] = [[schema, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > MAX_SCHEMA_DEPTH) return `the schema nests more than ${MAX_SCHEMA_DEPTH} levels deep`;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  const chars = JSON.stringify(schema).length;
  return chars > MAX_SCHEMA_CHARS ? `the schema is ${chars} characters of JSON, more than the ${MAX_SCHEMA_CHARS} allowed` : null;
}
