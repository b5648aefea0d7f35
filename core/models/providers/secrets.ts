/**
 * API keys: read from the environment variable a catalog names (a catalog holds only names, so a
 * catalog sent to a remote worker carries no key), and kept out of every message. Error text from
 * a provider can echo the key (OpenAI's 401 body does, partly masked), so anything a provider
 * says goes through `redactSecrets` before it reaches an error, a log line or the metrics.
 * Runs on: Node (core).
 */

/** The key in `env[name]`, or undefined when the variable is unset or blank. */
export function readApiKey(env: NodeJS.ProcessEnv, name: string | undefined): string | undefined {
  if (!name) return undefined;
  const value = env[name]?.trim();
  return value ? value : undefined;
}

// Shapes of common provider keys (OpenAI, Anthropic, Groq, Google, xAI, OpenRouter, NVIDIA, bearer tokens).
const KEY_SHAPES = /\b(?:sk|pk|rk|gsk|xai|nvapi|sk-ant|sk-or|AIza)[-_A-Za-z0-9*.]{8,}|Bearer\s+[-_A-Za-z0-9.*=]{8,}/g;

/** `text` with every known secret and anything shaped like a key replaced by `[redacted]`. */
export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const s of secrets) {
    if (s.length >= 4) out = out.split(s).join('[redacted]');
  }
  return out.replace(KEY_SHAPES, '[redacted]');
}
