/**
 * The sandboxed code plugins an import writes for promptfoo assertions no rule scorer expresses:
 * a test's own assertions (their values differ from test to test, so no single rule fits them
 * all) checked from the vignette's metadata, and a `javascript` assertion's code. The source runs
 * in the code-plugin sandbox (QuickJS), so it is plain ES2020 with no imports.
 * Runs on: Node (core).
 */

/**
 * Checks one assertion `{type, value}` against an answer, the way promptfoo does for the
 * deterministic types this import maps; `not-` inverts. Returns {pass, score, reason}.
 */
const CHECK_ONE = String.raw`
function isJson(text) { try { JSON.parse(text); return true; } catch (e) { return false; } }
function runJs(code, output, vars) {
  var body = /\breturn\b/.test(code) ? code : 'return (' + code + ');';
  var r = new Function('output', 'context', body)(output, { vars: vars });
  if (typeof r === 'boolean') return { pass: r, score: r ? 1 : 0 };
  if (typeof r === 'number') return { pass: r > 0, score: Math.max(0, Math.min(1, r)) };
  if (r && typeof r === 'object') {
    var s = typeof r.score === 'number' ? Math.max(0, Math.min(1, r.score)) : (r.pass ? 1 : 0);
    return { pass: !!r.pass, score: s, reason: r.reason };
  }
  return { pass: false, score: 0, reason: 'the javascript assertion returned ' + typeof r };
}
function checkOne(a, output, vars) {
  var negate = a.type.indexOf('not-') === 0;
  var type = negate ? a.type.slice(4) : a.type;
  var v = a.value;
  var list = Array.isArray(v) ? v.map(String) : [String(v)];
  var lo = output.toLowerCase();
  var pass;
  switch (type) {
    case 'equals': pass = typeof v === 'object' && v !== null ? isJson(output) && JSON.stringify(JSON.parse(output)) === JSON.stringify(v) : output === String(v); break;
    case 'contains': pass = output.indexOf(String(v)) !== -1; break;
    case 'icontains': pass = lo.indexOf(String(v).toLowerCase()) !== -1; break;
    case 'contains-any': pass = list.some(function (x) { return output.indexOf(x) !== -1; }); break;
    case 'icontains-any': pass = list.some(function (x) { return lo.indexOf(x.toLowerCase()) !== -1; }); break;
    case 'contains-all': pass = list.every(function (x) { return output.indexOf(x) !== -1; }); break;
    case 'icontains-all': pass = list.every(function (x) { return lo.indexOf(x.toLowerCase()) !== -1; }); break;
    case 'starts-with': pass = output.indexOf(String(v)) === 0; break;
    case 'regex': pass = new RegExp(String(v)).test(output); break;
    case 'is-json': pass = isJson(output); break;
    case 'javascript': {
      var r = runJs(String(v), output, vars);
      if (!negate) return r;
      return { pass: !r.pass, score: 1 - r.score, reason: r.reason };
    }
    default: return { pass: false, score: 0, reason: 'unknown assertion type ' + a.type };
  }
  if (negate) pass = !pass;
  return { pass: pass, score: pass ? 1 : 0, reason: pass ? undefined : a.type + ' ' + JSON.stringify(v) + ' failed' };
}
`;

/**
 * Every assertion of the vignette's `metadata.assert`, combined as promptfoo combines a test's:
 * the weighted mean of their scores; it passes when all pass (or, with the test's `threshold`,
 * when the mean reaches it). A vignette with none passes, as a promptfoo test without assertions does.
 */
export const TEST_ASSERTIONS_PLUGIN = `${CHECK_ONE}
function score(input) {
  var asserts = (input.metadata && input.metadata.assert) || [];
  if (asserts.length === 0) return { value: 1, passed: true, explanation: 'this test has no assertion of its own' };
  var vars = (input.metadata && input.metadata.vars) || {};
  var total = 0, weights = 0, allPass = true, reasons = [];
  for (var i = 0; i < asserts.length; i++) {
    var a = asserts[i];
    var w = typeof a.weight === 'number' ? a.weight : 1;
    var r = checkOne(a, input.response, vars);
    total += r.score * w; weights += w;
    if (!r.pass) { allPass = false; reasons.push(r.reason || a.type + ' failed'); }
  }
  var value = weights > 0 ? total / weights : 1;
  var threshold = input.metadata.threshold;
  var passed = typeof threshold === 'number' ? value >= threshold : allPass;
  return { value: value, passed: passed, explanation: reasons.length ? reasons.join('; ') : undefined };
}
`;

/** One assertion, the same for every vignette, as a plugin of its own (its JSON inlined). */
export function singleAssertionPlugin(assertion: { type: string; value?: unknown }): string {
  return `${CHECK_ONE}
var ASSERTION = ${JSON.stringify(assertion)};
function score(input) {
  var r = checkOne(ASSERTION, input.response, (input.metadata && input.metadata.vars) || {});
  return { value: r.score, passed: r.pass, explanation: r.pass ? undefined : r.reason };
}
`;
}
