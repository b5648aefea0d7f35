/**
 * A small OpenAI-compatible chat server of our own, run as a real child process so tests can kill
 * it (SIGKILL) and start it again on the same port mid-sweep. It answers `/v1/chat/completions`
 * after a delay, with usage; a prompt containing ALWAYS500, ALWAYS429 or ALWAYSEMPTY always gets
 * that failure unless the server was started healed. Every request it receives is one line on
 * its stdout, so a test counts what reached the server, and so is each new peak of the requests it
 * holds at once (received, not yet answered), so a test sees how many calls were in flight.
 * Runs on: Node (tests).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

const SERVER = `
import http from 'node:http';
const [port, delayMs, healed] = process.argv.slice(1).map(Number);
let held = 0;
let peak = 0;
const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (d) => (body += d));
  req.on('end', () => {
    process.stdout.write('request\\n');
    held += 1;
    if (held > peak) process.stdout.write('peak ' + (peak = held) + '\\n');
    const json = JSON.parse(body || '{}');
    const text = (json.messages ?? []).map((m) => m.content).join(' ');
    const send = (status, payload, headers = {}) => {
      held -= 1;
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(payload));
    };
    if (!healed && text.includes('ALWAYS500')) return send(500, { error: { message: 'always 500' } });
    if (!healed && text.includes('ALWAYS429')) return send(429, { error: { message: 'always 429' } }, { 'retry-after-ms': '50' });
    setTimeout(() => {
      const content = !healed && text.includes('ALWAYSEMPTY') ? '' : 'answer to ' + text;
      send(200, {
        id: 'c1', object: 'chat.completion', created: 0, model: json.model,
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
        usage: { prompt_tokens: text.length, completion_tokens: 3, total_tokens: text.length + 3 },
      });
    }, delayMs);
  });
});
server.listen(port, '127.0.0.1', () => process.stderr.write('listening ' + server.address().port + '\\n'));
`;

export interface ServerProcess {
  port: number;
  /** Requests this process received. */
  requests(): number;
  /** The most requests it held at once. */
  peakInFlight(): number;
  kill(): Promise<void>;
}

/** Starts the server (port 0: any free port) and resolves once it listens. */
export async function startOpenAIServer(opts: { port?: number; delayMs?: number; healed?: boolean } = {}): Promise<ServerProcess> {
  const child: ChildProcessWithoutNullStreams = spawn(
    process.execPath,
    ['--input-type=module', '-e', SERVER, String(opts.port ?? 0), String(opts.delayMs ?? 20), opts.healed ? '1' : '0'],
    { stdio: 'pipe' },
  );
  let requests = 0;
  let peak = 0;
  let partial = '';
  child.stdout.on('data', (d: Buffer) => {
    const lines = (partial + d.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (line === 'request') requests += 1;
      else if (line.startsWith('peak ')) peak = Number(line.slice(5));
    }
  });
  const port = await new Promise<number>((resolve, reject) => {
    let err = '';
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening (\d+)/.exec(err);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`server exited (${code}): ${err}`)));
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    port,
    requests: () => requests,
    peakInFlight: () => peak,
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}
