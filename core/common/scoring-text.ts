/**
 * A scoring file's text as a value, the one rule of the command line and the app: text whose first
 * character (after white space and a byte order mark) is `{` is JSON, anything else YAML, so a
 * `.json` file and text pasted into the app are read alike. A syntax error says where (line and,
 * for JSON, column, both from 1) and what, for each surface to word with its own place (a file's
 * path, the editor's line). YAML aliases are capped (`maxAliasCount`), so a billion-laughs file is
 * refused instead of expanded. What the value means is the scoring config's schema's to check.
 * Browser-safe: it imports only the `yaml` package, so the renderer may import it.
 * Runs on: Node (core) and the renderer (browser-safe).
 */
import { YAMLParseError, parse as parseYaml } from 'yaml';

export type ScoringSyntax =
  | { ok: true; value: unknown }
  | { ok: false; syntax: 'JSON' | 'YAML'; line: number | null; column: number | null; message: string };

export function parseScoringSyntax(text: string): ScoringSyntax {
  if (text.trimStart().startsWith('{')) {
    try {
      return { ok: true, value: JSON.parse(text) as unknown };
    } catch (err) {
      const message = (err as Error).message;
      return { ok: false, syntax: 'JSON', ...jsonErrorPlace(text, message), message };
    }
  }
  try {
    return { ok: true, value: parseYaml(text, { maxAliasCount: 100 }) as unknown };
  } catch (err) {
    const line = err instanceof YAMLParseError ? (err.linePos?.[0]?.line ?? null) : null;
    return { ok: false, syntax: 'YAML', line, column: null, message: (err as Error).message.split('\n')[0] ?? '' };
  }
}

/**
 * Where JSON.parse stopped, as line and column (both from 1): from the position its message gives,
 * or the end of the text for an input that ended too soon.
 */
function jsonErrorPlace(text: string, message: string): { line: number; column: number } {
  const lineCol = /line (\d+) column (\d+)/.exec(message);
  if (lineCol) return { line: Number(lineCol[1]), column: Number(lineCol[2]) };
  const pos = /position (\d+)/.exec(message);
  const offset = pos ? Math.min(Number(pos[1]), text.length) : text.length;
  const before = text.slice(0, offset);
  return { line: before.split('\n').length, column: offset - (before.lastIndexOf('\n') + 1) + 1 };
}
