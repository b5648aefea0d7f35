/**
 * Calls, tokens and estimated cost per model as a table: the run view's usage and the stats view's
 * numbers beside its charts, one component so the two always read the same. Calls the prompt cache
 * answered are shown as what they are: a count, the tokens those answers carry (billed to no one, so
 * not in the token columns) and the cost they saved.
 * Runs on: renderer.
 */
import type { ModelCost } from '../api/types.js';
import { formatInt, formatUsd } from '../format.js';

type Totals = Omit<ModelCost, 'model'>;

function totalOf(models: readonly ModelCost[]): Totals {
  const sum = (pick: (m: ModelCost) => number) => models.reduce((s, m) => s + pick(m), 0);
  return {
    calls: sum((m) => m.calls),
    inputTokens: sum((m) => m.inputTokens),
    outputTokens: sum((m) => m.outputTokens),
    estCostUsd: sum((m) => m.estCostUsd),
    cachedCalls: sum((m) => m.cachedCalls),
    cachedInputTokens: sum((m) => m.cachedInputTokens),
    cachedOutputTokens: sum((m) => m.cachedOutputTokens),
    savedCostUsd: sum((m) => m.savedCostUsd),
  };
}

function Cells({ u, Cell }: { u: Totals; Cell: 'td' | 'th' }) {
  return (
    <>
      <Cell className="num">{formatInt(u.calls)}</Cell>
      <Cell className="num" data-col="cached-calls">{formatInt(u.cachedCalls)}</Cell>
      <Cell className="num">{formatInt(u.inputTokens)}</Cell>
      <Cell className="num">{formatInt(u.outputTokens)}</Cell>
      <Cell className="num" data-col="cached-tokens">{formatInt(u.cachedInputTokens + u.cachedOutputTokens)}</Cell>
      <Cell className="num">{formatUsd(u.estCostUsd)}</Cell>
      <Cell className="num" data-col="saved">{formatUsd(u.savedCostUsd)}</Cell>
    </>
  );
}

export function ModelCostTable({ models, testId, withTotal = false }: { models: readonly ModelCost[]; testId: string; withTotal?: boolean }) {
  return (
    <table className="table compact" data-testid={testId}>
      <thead>
        <tr>
          <th scope="col">Model</th>
          <th scope="col" className="num">Calls</th>
          <th scope="col" className="num" title="Calls answered from the prompt cache">From cache</th>
          <th scope="col" className="num">Input tokens</th>
          <th scope="col" className="num">Output tokens</th>
          <th scope="col" className="num" title="Input + output tokens the cached answers carry; no provider billed them">Cached tokens</th>
          <th scope="col" className="num">Est. cost</th>
          <th scope="col" className="num" title="What the cached answers would have cost">Saved</th>
        </tr>
      </thead>
      <tbody>
        {models.map((m) => (
          <tr key={m.model} data-model={m.model}>
            <td className="nowrap">{m.model}</td>
            <Cells u={m} Cell="td" />
          </tr>
        ))}
      </tbody>
      {withTotal && (
        <tfoot>
          <tr data-model="total">
            <th scope="row">Total</th>
            <Cells u={totalOf(models)} Cell="th" />
          </tr>
        </tfoot>
      )}
    </table>
  );
}
