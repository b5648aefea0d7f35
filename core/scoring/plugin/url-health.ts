/**
 * The `url_health` built-in: every http(s) URL in the response answers a HEAD request with a
 * success or a redirect. It needs the network, which the sandbox never has, so it runs here in
 * the host, and only where both the scorer asks for the `network` capability and the process was
 * started allowing it (`--allow-network`). The value is the share of URLs that answered; the
 * explanation lists the others with what they answered.
 * Runs on: Node (core).
 */
import type { Scorer, ScoreInput, ScoreValue, FailSeverity } from '../scorer.js';

/** How long one URL may take to answer. */
const URL_TIMEOUT_MS = 5000;
/** URLs checked per response, at most (the rest are not checked, and the explanation says so). */
const MAX_URLS = 20;
/** HEAD requests in flight at once for one response. */
const IN_FLIGHT = 4;

/** The http(s) URLs in a text, without trailing punctuation, each once, in order. */
function urlsIn(text: string): string[] {
  const found = text.match(/\bhttps?:\/\/[^\s<>"'`)\]}]+/gi) ?? [];
  return [...new Set(found.map((u) => u.replace(/[.,;:!?]+$/, '')))];
}

/** What a URL answered: null when it is healthy (2xx or 3xx), else a few words. */
async function headProblem(url: string, signal?: AbortSignal): Promise<string | null> {
  const timeout = AbortSignal.timeout(URL_TIMEOUT_MS);
  try {
    const res = await fetch(url, { method: 'HEAD', redirect: 'manual', signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
    return res.status < 400 ? null : `HTTP ${res.status}`;
  } catch (err) {
    if (timeout.aborted) return `no answer in ${URL_TIMEOUT_MS / 1000} s`;
    const cause = (err as { cause?: { code?: string } }).cause;
    return cause?.code ?? (err as Error).message;
  }
}

export class UrlHealthScorer implements Scorer {
  readonly kind = 'graded';
  readonly judges: readonly string[] = [];

  constructor(
    readonly name: string,
    readonly version: string,
    private readonly severity: FailSeverity,
  ) {}

  async score(input: ScoreInput, signal?: AbortSignal): Promise<ScoreValue[]> {
    const all = urlsIn(input.response);
    if (all.length === 0) return [{ value: 1, passed: true, severity: 'none', explanation: 'no URLs', judge: null }];
    const urls = all.slice(0, MAX_URLS);
    const problems: (string | null)[] = new Array<string | null>(urls.length).fill(null);
    let next = 0;
    const lane = async () => {
      while (next < urls.length) {
        const i = next++;
        problems[i] = await headProblem(urls[i]!, signal);
      }
    };
    await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, urls.length) }, lane));
    const broken = urls.flatMap((u, i) => (problems[i] === null ? [] : [`${u} (${problems[i]})`]));
    const value = (urls.length - broken.length) / urls.length;
    const says = [...(broken.length ? [`broken: ${broken.join(', ')}`] : []), ...(all.length > MAX_URLS ? [`${all.length - MAX_URLS} more URLs not checked`] : [])];
    const passed = broken.length === 0;
    return [{ value, passed, severity: passed ? 'none' : this.severity, explanation: says.join('; '), judge: null }];
  }
}
