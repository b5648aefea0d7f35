/**
 * Helpers for turning schema failures into errors that name the place.
 * Runs on: Node (core).
 */
import type { z } from 'zod';

/**
 * `field.path: message; other.field: message` — short enough for one line of a CLI or a form.
 * With `within`, each path is under it (`scorer x.pattern: message`).
 */
export function formatZodIssues(error: z.ZodError, within?: string): string {
  return error.issues
    .map((issue) => {
      const path = [...(within === undefined ? [] : [within]), ...issue.path.map(String)].join('.');
      return path ? `${path}: ${issue.message}` : issue.message;
    })
    .join('; ');
}

/** The path of the first failing field, for errors that point a form at one input. */
export function firstIssuePath(error: z.ZodError): string | undefined {
  const path = error.issues[0]?.path;
  return path && path.length > 0 ? path.map(String).join('.') : undefined;
}
