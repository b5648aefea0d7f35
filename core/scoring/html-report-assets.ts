/**
 * The inline style and script of the shared HTML report. The script builds the vignette table from
 * the page's embedded JSON (`#vignette-data`) in slices of rows with a turn of the event loop
 * between them, so a table of thousands of rows never freezes the page, and makes it searchable
 * (every cell's text) and sortable (click a header; again to reverse). It writes only with
 * textContent: no text from a model or a manifest is ever parsed as HTML. Plain ES2015 that runs
 * from file:// in any current browser, with no request of any kind.
 * Runs on: Node (core); the script runs in the browser that opens the report.
 */

export const REPORT_STYLE = `
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 72rem; padding: 0 1rem; color: #1d2330; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 2rem; border-bottom: 1px solid #d5d9e0; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { border-bottom: 1px solid #e4e7ec; padding: .25rem .6rem; text-align: left; vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.note { color: #5a6475; font-size: .9em; } .warn { color: #9a3b00; }
#vignettes th { cursor: pointer; user-select: none; position: sticky; top: 0; background: #f6f7f9; }
#vignettes th[aria-sort="ascending"]::after { content: " \\25B2"; } #vignettes th[aria-sort="descending"]::after { content: " \\25BC"; }
#vignettes td.answer { max-width: 28rem; white-space: pre-wrap; word-break: break-word; font-size: .9em; }
.pass { color: #17663a; font-weight: 600; } .fail { color: #a3241a; font-weight: 600; }
#search { padding: .3rem .5rem; width: 22rem; max-width: 100%; }
svg text { font: 12px system-ui, sans-serif; fill: #1d2330; }
`;

export const REPORT_SCRIPT = `(function () {
  'use strict';
  var table = document.getElementById('vignettes');
  if (!table) return;
  var data = JSON.parse(document.getElementById('vignette-data').textContent);
  var body = table.tBodies[0];
  var search = document.getElementById('search');
  var shown = document.getElementById('shown');
  var SLICE = 250;
  var generation = 0;
  var sortColumn = -1, sortDir = 1;
  function verdict(cell) {
    if (cell.value === null) return 'not scored';
    if (cell.passed !== null) return (cell.passed * 2 > cell.scored ? 'pass' : 'fail') + (cell.scored > 1 ? ' ' + cell.passed + '/' + cell.scored : '');
    return cell.value.toFixed(3);
  }
  var rows = data.rows.map(function (r) {
    var tr = document.createElement('tr');
    var td = document.createElement('td');
    td.textContent = r.id;
    tr.appendChild(td);
    var text = [r.id];
    r.cells.forEach(function (c) {
      var a = document.createElement('td');
      a.className = 'answer';
      a.textContent = c.answer === null ? '' : c.answer;
      var v = document.createElement('td');
      var word = verdict(c);
      v.textContent = word;
      v.className = 'num' + (word.indexOf('pass') === 0 ? ' pass' : word.indexOf('fail') === 0 ? ' fail' : '');
      tr.appendChild(a);
      tr.appendChild(v);
      text.push(c.answer === null ? '' : c.answer, word);
    });
    return { tr: tr, row: r, text: text.join('\\n').toLowerCase() };
  });
  function keyOf(item, column) {
    if (column === 0) return item.row.id;
    var cell = item.row.cells[(column - 1) >> 1];
    if ((column - 1) % 2 === 0) return cell.answer === null ? '' : cell.answer;
    return cell.value === null ? -Infinity : cell.value;
  }
  function render() {
    var mine = ++generation;
    var q = search.value.trim().toLowerCase();
    var list = rows.filter(function (item) { return q === '' || item.text.indexOf(q) !== -1; });
    if (sortColumn >= 0) {
      list.sort(function (x, y) {
        var a = keyOf(x, sortColumn), b = keyOf(y, sortColumn);
        return (a < b ? -1 : a > b ? 1 : 0) * sortDir;
      });
    }
    while (body.firstChild) body.removeChild(body.firstChild);
    shown.textContent = list.length + ' of ' + rows.length + ' rows';
    var at = 0;
    (function slice() {
      if (mine !== generation) return;
      var end = Math.min(at + SLICE, list.length);
      var frag = document.createDocumentFragment();
      for (; at < end; at++) frag.appendChild(list[at].tr);
      body.appendChild(frag);
      if (at < list.length) setTimeout(slice, 0);
      else table.setAttribute('data-ready', String(mine));
    })();
  }
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
    th.addEventListener('click', function () {
      sortDir = sortColumn === i ? -sortDir : 1;
      sortColumn = i;
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute('aria-sort'); });
      th.setAttribute('aria-sort', sortDir === 1 ? 'ascending' : 'descending');
      render();
    });
  });
  search.addEventListener('input', render);
  render();
})();`;
