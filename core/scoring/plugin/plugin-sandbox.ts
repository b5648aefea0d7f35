/**
 * What runs inside a code plugin's thread: the thread's own source (Panoptes code, trusted), and
 * the two scripts it evaluates in the plugin's QuickJS context around the plugin's source. The
 * caps are enforced here by the host, never by the plugin: the whole WebAssembly memory of the
 * plugin's QuickJS instance is created with a maximum, so typed arrays and everything else the
 * runtime holds count; QuickJS interrupts the plugin's own code at the time cap, and the thread
 * writes into a shared watch what it is doing and until when, so the host's watchdog can stop a
 * thread stuck in a native built-in; and what comes out of the sandbox is cut to a bounded size by
 * functions captured before the plugin's code ran, so a plugin replacing `String.prototype.slice`
 * or `JSON.stringify` changes nothing outside its own code.
 * Runs on: Node (core), in a worker thread.
 */

/** The whole WebAssembly memory of one plugin's QuickJS instance: everything its runtime holds. */
export const PLUGIN_MEMORY_BYTES = 64 * 1024 * 1024;
/** Within that memory, what QuickJS's own allocator may hand out (objects, strings, arrays). */
export const PLUGIN_HEAP_BYTES = 32 * 1024 * 1024;
/** How long one call may run before QuickJS interrupts it; the watchdog stops the thread at twice this. */
export const PLUGIN_CALL_MS = 100;
/** How long the plugin's top-level code may run when it is compiled (the watchdog: twice this). */
export const PLUGIN_LOAD_MS = 1000;
/** How long a thread may take to start QuickJS before the watchdog stops it (a second on a busy machine). */
export const PLUGIN_START_MS = 10_000;
/** Native stack a plugin may use: deep recursion is a stack-overflow error, not a crash. */
export const PLUGIN_STACK_BYTES = 512 * 1024;
/** Characters of a plugin's explanation, or of why it failed, that are kept. */
export const MAX_EXPLANATION = 2000;
/** The longest result the host reads back: three fields of at most MAX_EXPLANATION characters, JSON-escaped. */
export const MAX_RESULT_CHARS = 6 * 3 * MAX_EXPLANATION + 200;

/** Slots of the watch the thread shares with the host: until when the current step may run (ms since the epoch, 0: idle), and which record of the batch it is on (-1: none). */
export const WATCH_UNTIL = 0;
export const WATCH_RECORD = 1;

/**
 * Evaluated first in every fresh context, before the plugin's code: captures the functions the
 * entry relies on while they are still the language's own, and returns `makeEntry(score)`, which
 * wraps `score` so that the host passes the record as one JSON string and gets back one JSON
 * string describing what `score` returned or threw, every string in it cut to MAX_EXPLANATION.
 */
const PRIMORDIALS = `(function () {
  const uncurry = Function.prototype.bind.bind(Function.prototype.call);
  const slice = uncurry(String.prototype.slice);
  const hasInstance = uncurry(Function.prototype[Symbol.hasInstance]);
  const PromiseCtor = Promise;
  const isArray = Array.isArray;
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  const toText = String;
  const isFinite = Number.isFinite;
  const create = Object.create;
  const MAX = ${MAX_EXPLANATION};
  const cut = (s) => (s.length > MAX ? slice(s, 0, MAX) : s);
  const num = (v) => (typeof v === 'number' && !isFinite(v) ? toText(v) : v);
  const kindOf = (v) => (v === null ? 'null' : isArray(v) ? 'array' : hasInstance(PromiseCtor, v) ? 'promise' : typeof v);
  const typed = (type) => { const o = create(null); o.type = type; return o; };
  const field = (v) => (v === undefined || v === null || typeof v === 'number' || typeof v === 'boolean' ? num(v) : typeof v === 'string' ? cut(v) : typed(kindOf(v)));
  const bare = (kind) => { const o = create(null); o.kind = kind; return o; };
  const described = (e) => {
    if (e === null || (typeof e !== 'object' && typeof e !== 'function')) return 'threw ' + (typeof e === 'string' ? cut(e) : toText(e));
    try {
      const name = e.name;
      const message = e.message;
      return (typeof name === 'string' ? cut(name) : 'Error') + ': ' + (typeof message === 'string' ? cut(message) : '(no message)');
    } catch (_) {
      return 'threw a value whose name or message could not be read';
    }
  };
  return function makeEntry(score) {
    if (typeof score !== 'function') throw new TypeError('the plugin defines no function score(input)');
    return function (json) {
      let r;
      let kind;
      try {
        r = score(parse(json));
        kind = kindOf(r);
        const o = bare(kind === 'number' || kind === 'boolean' || kind === 'object' ? kind : 'other');
        if (kind === 'number' || kind === 'boolean') o.value = num(r);
        else if (kind !== 'object') o.type = kind;
        else {
          o.value = field(r.value);
          o.passed = field(r.passed);
          o.explanation = field(r.explanation);
        }
        return stringify(o);
      } catch (e) {
        const o = bare('threw');
        o.message = cut(described(e));
        return stringify(o);
      }
    };
  };
})()`;

/** Evaluated after the plugin's code: its \`score\`, wherever the top level declared it. */
const FIND_SCORE = `typeof score === 'undefined' ? undefined : score`;

/** Code that goes through what most plugins use: the parser, closures, JSON, strings and regular expressions. */
const WARM_UP = `JSON.stringify(JSON.parse('[1,{"a":"b c"}]').map(function (x) {
  const s = String(typeof x === 'object' ? x.a : x);
  return [s.replace(/b/g, 'd').split(' ').length, s.trim().toLowerCase(), /\\d+/.test(s), Math.min(1, s.length / 10)];
}))`;

/**
 * The plugin's thread. Records are handled one after another; a call that hit a cap leaves the
 * runtime in a state not worth trusting, so the thread drops the whole QuickJS instance (and its
 * memory) and the next record gets a fresh one with the plugin compiled again. A plugin that does
 * not load (a top-level throw, no `score`) fails every record with the same reason.
 */
export const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { quickjs, source, filename, memoryBytes, heapBytes, stackBytes, callMs, loadMs, startMs, maxChars, resultChars, watchBuffer } = workerData;
const { newQuickJSWASMModuleFromVariant, newVariant, RELEASE_SYNC } = require(quickjs);
const watch = new Float64Array(watchBuffer);
const guard = (ms, record) => { watch[${WATCH_RECORD}] = record; watch[${WATCH_UNTIL}] = ms === 0 ? 0 : Date.now() + ms; };
const cut = (s) => (s.length > maxChars ? s.slice(0, maxChars) : s);
// The first evaluations in a QuickJS instance compile much of its WebAssembly; that is paid for
// here, outside any cap, rather than inside the plugin's first call.
const freshEngine = () => {
  guard(startMs, -1);
  const wasmMemory = new WebAssembly.Memory({ initial: 256, maximum: memoryBytes / 65536 });
  return newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmMemory })).then((e) => {
    const runtime = e.newRuntime();
    const context = runtime.newContext();
    const r = context.evalCode(${JSON.stringify(WARM_UP)}, 'warm-up.js');
    (r.error || r.value).dispose();
    context.dispose();
    runtime.dispose();
    guard(0, -1);
    return e;
  });
};
let engine = freshEngine();
let plugin = null;
let loadError = null;
let deadline = 0;

const MEMORY_CAP = 'ran out of its ' + Math.round(memoryBytes / 1048576) + ' MiB memory cap';
const capHit = (m) => /time cap|memory cap|^Aborted\\(|not alive/.test(m);
// Only the engine's own errors reach here (the entry catches whatever the plugin throws).
function describe(ctx, handle) {
  let text;
  try {
    const d = ctx.dump(handle);
    text = d && typeof d === 'object' ? String(d.name) + ': ' + String(d.message) : 'threw ' + String(d);
  } catch (err) {
    text = 'failed: ' + String(err && err.message);
  }
  handle.dispose();
  if (/interrupted/i.test(text) && Date.now() > deadline) return 'ran past its time cap (' + callMs + ' ms a call, ' + loadMs + ' ms to load) and was interrupted';
  if (/out of memory/i.test(text)) return MEMORY_CAP;
  return cut(text);
}
function settle(ctx, r) {
  if (!r.error) return r.value;
  throw new Error(describe(ctx, r.error));
}
function compile(e) {
  const runtime = e.newRuntime();
  runtime.setMemoryLimit(heapBytes);
  runtime.setMaxStackSize(stackBytes);
  runtime.setInterruptHandler(() => Date.now() > deadline);
  const context = runtime.newContext();
  deadline = Date.now() + loadMs;
  guard(2 * loadMs, -1);
  const makeEntry = settle(context, context.evalCode(${JSON.stringify(PRIMORDIALS)}, 'panoptes-entry.js'));
  settle(context, context.evalCode(source, filename)).dispose();
  const score = settle(context, context.evalCode(${JSON.stringify(FIND_SCORE)}, 'panoptes-entry.js'));
  const entry = settle(context, context.callFunction(makeEntry, context.undefined, score));
  score.dispose();
  makeEntry.dispose();
  guard(0, -1);
  return { context, entry };
}
async function call(json, index) {
  if (await load()) throw new Error('the plugin did not load: ' + loadError);
  const ctx = plugin.context;
  const arg = ctx.newString(json);
  deadline = Date.now() + callMs;
  guard(2 * callMs, index);
  try {
    const r = ctx.callFunction(plugin.entry, ctx.undefined, arg);
    arg.dispose();
    const h = settle(ctx, r);
    try {
      // The entry returns a string of its own making; anything else is not read.
      if (ctx.typeof(h) !== 'string') return '';
      const lengthHandle = ctx.getProp(h, 'length');
      const length = ctx.getNumber(lengthHandle);
      lengthHandle.dispose();
      return length > resultChars ? '' : ctx.getString(h);
    } finally {
      h.dispose();
    }
  } finally {
    guard(0, -1);
  }
}
async function load() {
  const e = await engine;
  if (!plugin && !loadError) {
    try {
      plugin = compile(e);
    } catch (err) {
      loadError = cut(String(err.message));
    }
  }
  return loadError;
}
function reset() {
  plugin = null;
  engine = freshEngine();
}
let queue = Promise.resolve();
parentPort.on('message', ({ id, inputs, loadOnly }) => {
  queue = queue.then(async () => {
    if (loadOnly) return parentPort.postMessage({ id, results: [], loadError: await load() });
    const results = [];
    for (let i = 0; i < inputs.length; i++) {
      try {
        const ok = await call(inputs[i], i);
        // The entry catches QuickJS's own out-of-memory error like any throw: it is the cap all the same.
        if (ok.startsWith('{"kind":"threw","message":"InternalError: out of memory')) throw new Error(MEMORY_CAP);
        results.push({ ok });
      } catch (err) {
        const message = cut(String((err && err.message) || err));
        results.push({ error: message });
        if (capHit(message)) reset();
      }
    }
    parentPort.postMessage({ id, results });
  });
});`;
