/**
 * What counts as the JSON of an answer, for the `json` rule and the `json_parses` built-in alike:
 * the whole trimmed answer, else the first fenced code block labelled `json` or not labelled
 * (```` ``` ```` or `~~~`), wherever it stands among prose, that parses. Found by one pass over
 * the lines, so an answer full of unclosed fences costs no more than its length.
 * Runs on: Node (core).
 */

export type ParsedJson = { ok: true; value: unknown } | { ok: false; error: string };

const OPENING = /^[ \t]*(```|~~~)[ \t]*([\w+-]*)[ \t]*$/u;

/** The bodies of the answer's fenced blocks labelled json or not labelled, in order. */
function fencedBlocks(text: string): string[] {
  const blocks: string[] = [];
  let open: { fence: string; label: string; from: number } | null = null;
  const lines = text.split(/\r?\n/u);
  lines.forEach((line, i) => {
    const m = OPENING.exec(line);
    if (!m) return;
    if (open === null) open = { fence: m[1]!, label: m[2]!.toLowerCase(), from: i + 1 };
    else if (m[1] === open.fence && m[2] === '') {
      if (open.label === '' || open.label === 'json') blocks.push(lines.slice(open.from, i).join('\n'));
      open = null;
    }
  });
  return blocks;
}

function parse(text: string): ParsedJson {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

/** The answer's JSON (see the header), or why none parses: the first fenced block's error, else the whole answer's. */
export function parseJsonResponse(response: string): ParsedJson {
  const whole = parse(response.trim());
  if (whole.ok || (!response.includes('```') && !response.includes('~~~'))) return whole;
  let first: ParsedJson | null = null;
  for (const block of fencedBlocks(response)) {
    const parsed = parse(block);
    if (parsed.ok) return parsed;
    first ??= { ok: false, error: `the fenced block: ${parsed.error}` };
  }
  return first ?? whole;
}
