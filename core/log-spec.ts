/**
 * What PANOPTES_LOG asks for, read without the logger: the commands that start light (`runs`,
 * `stats`) check it here and load no logging library, and telemetry.ts builds the logger from it.
 * Runs on: Node (core).
 */
const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** What PANOPTES_LOG asks for: a level, levels per component, or why it cannot be read. */
export interface LogSpec {
  level: string;
  components: Record<string, string>;
  /** Why the text was refused (the spec is then `info` for everything), or null. */
  problem: string | null;
}

/**
 * Reads `LEVEL[,COMPONENT=LEVEL...]` (either part optional, e.g. `router=debug`); unset or empty
 * means `fallback`. Anything it cannot read makes the whole spec `info`, with the reason.
 */
export function parseLogSpec(raw: string | undefined, fallback: string): LogSpec {
  const text = raw?.trim() ?? '';
  if (text === '') return { level: fallback, components: {}, problem: null };
  let level = fallback;
  const components: Record<string, string> = {};
  for (const part of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const eq = part.indexOf('=');
    const name = eq === -1 ? null : part.slice(0, eq).trim();
    const value = (eq === -1 ? part : part.slice(eq + 1)).trim().toLowerCase();
    let why: string | null = null;
    if (!LEVELS.includes(value)) why = `"${value}" is not a level`;
    else if (name !== null && !/^[a-z][a-z0-9-]*$/.test(name)) why = `"${name}" is not a component name`;
    if (why !== null) {
      return {
        level: 'info',
        components: {},
        problem: `PANOPTES_LOG="${text}" is not valid (${why}); logging at info. Give a level (${LEVELS.join(', ')}), then component=level pairs if you like, e.g. info,router=debug`,
      };
    }
    if (name === null) level = value;
    else components[name] = value;
  }
  return { level, components, problem: null };
}

/** For a command that logs nothing of its own: says once on stderr why PANOPTES_LOG cannot be read. */
export function warnOnUnreadableLogSpec(): void {
  const { problem } = parseLogSpec(process.env.PANOPTES_LOG, 'warn');
  if (problem) process.stderr.write(`panoptes: ${problem}\n`);
}
