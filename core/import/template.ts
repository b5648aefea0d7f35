/**
 * The part of Nunjucks that imported suites use: `{{ name }}` and `{{ name.field }}` substituted
 * from a test's vars, with an unknown var an error naming it. Tags (`{% ... %}`), filters
 * (`{{ x | upper }}`) and expressions are refused rather than rendered wrongly, so a suite that
 * needs them says so at import instead of posing a half-rendered prompt.
 * Runs on: Node (core).
 */

const PLACEHOLDER = /\{\{-?\s*([^}]*?)\s*-?\}\}/g;
const PATH = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*|\[\d+\])*$/;

/** Why a template cannot be rendered: an unknown var, or a construct outside the supported subset. */
export class TemplateError extends Error {}

/** The vars a template names (the first segment of each placeholder), in order of first use. */
export function templateVars(template: string): string[] {
  const names = new Set<string>();
  for (const m of template.matchAll(PLACEHOLDER)) {
    const expr = m[1]!;
    if (PATH.test(expr)) names.add(/^[A-Za-z_$][\w$]*/.exec(expr)![0]);
  }
  return [...names];
}

function lookup(vars: Record<string, unknown>, expr: string): unknown {
  let value: unknown = vars;
  for (const part of expr.split(/\.|\[(\d+)\]/).filter((p) => p !== undefined && p !== '')) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

function show(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** The template with every placeholder replaced by its var's text (objects as JSON), or a TemplateError. */
export function renderTemplate(template: string, vars: Record<string, unknown>): string {
  if (/\{%|\{#/.test(template)) throw new TemplateError('uses a Nunjucks tag or comment ({% %} or {# #}); only {{ var }} placeholders are supported');
  return template.replace(PLACEHOLDER, (_whole, expr: string) => {
    if (!PATH.test(expr)) throw new TemplateError(`"{{ ${expr} }}" is not a plain var (filters and expressions are not supported)`);
    const value = lookup(vars, expr);
    if (value === undefined || value === null) throw new TemplateError(`names the unknown var "${expr}"`);
    return show(value);
  });
}
