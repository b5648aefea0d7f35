/**
 * What counts as the JSON of an answer, for the `json` rule and the `json_parses` built-in alike:
 * the whole trimmed answer, else the first fenced code block labelled `json` or not labelled
 * (```` ``` ```` or `~~~`), wherever it stands among prose, that parses (of its first 16 blocks).
 * Found by one pass over the lines, so an answer full of fences costs no more than its length.
 * Runs on: Node (core).
 */

export type ParsedJson = { ok: true; value: unknown } | { ok: false; error: string };

/** Fenced blocks read at most: an answer of a hundred thousand fences costs no more than its first few. */
const MAX_BLOCKS = 16;

const OPENING = /^[ \t]*(```|~~~)[ \t]*([\w+-]*)[ \t]*$/u;
const FENCE_START = /^[ \t]*(?:```|~~~)/;

/**
 * The bodies of the answer's first `MAX_BLOCKS` fenced blocks labelled json or not labelled, in
 * order. Lines are walked with indexOf, and only a line that opens with a fence is matched.
 */
function fencedBlocks(text: string): string[] {
  const blocks: string[] = [];
  let open: { fence: string; label: string; from: number } | null = null;
  for (let at = 0; at <= text.length && blocks.length < MAX_BLOCKS; ) {
    const nl = text.indexOf('\n', at);
    const end = nl < 0 ? text.length : nl;
    const line = text.slice(at, end);
    const m = FENCE_START.test(line) ? OPENING.exec(line.replace(/\r$/, '')) : null;
    if (m && open === null) open = { fence: m[1]!, label: m[2]!.toLowerCase(), from: end + 1 };
    else if (m && open !== null && m[1] === open.fence && m[2] === '') {
      if (open.label === '' || open.label === 'json') blocks.push(text.slice(open.from, Math.max(open.from, at - 1)).replace(/\r$/, ''));
      open = null;
    }
    if (nl < 0) break;
    at = nl + 1;
  }
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
    if (block.trim() === '') continue;
    const parsed = parse(block);
    if (parsed.ok) return parsed;
    first ??= { ok: false, error: `the fenced block: ${parsed.error}` };
  }
  return first ?? whole;
}
