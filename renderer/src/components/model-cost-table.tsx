/**
 * Calls, tokens and estimated cost per model as a table: the run view's usage and the stats view's
 * numbers beside its charts, one component so the two always read the same.
 * Runs on: renderer.
 */
import type { ModelCost } from '../api/types.js';
import { formatInt, formatUsd } from '../format.js';

export function ModelCostTable({ models, testId, withTotal = false }: { models: readonly ModelCost[]; testId: string; withTotal?: boolean }) {
  const total = models.reduce(
    (t, m) => ({
      calls: t.calls + m.calls,
      inputTokens: t.inputTokens + m.inputTokens,
      outputTokens: t.outputTokens + m.outputTokens,
      estCostUsd: t.estCostUsd + m.estCostUsd,
    }),
    { calls: 0, inputTokens: 0, outputTokens: 0, estCostUsd: 0 },
  );
  return (
    <table className="table compact" data-testid={testId}>
      <thead>
        <tr>
          <th>Model</th>
          <th className="num">Calls</th>
          <th className="num">Input tokens</th>
          <th className="num">Output tokens</th>
          <th className="num">Est. cost</th>
        </tr>
      </thead>
      <tbody>
        {models.map((m) => (
          <tr key={m.model} data-model={m.model}>
            <td className="nowrap">{m.model}</td>
            <td className="num">{formatInt(m.calls)}</td>
            <td className="num">{formatInt(m.inputTokens)}</td>
            <td className="num">{formatInt(m.outputTokens)}</td>
            <td className="num">{formatUsd(m.estCostUsd)}</td>
          </tr>
        ))}
      </tbody>
      {withTotal && (
        <tfoot>
          <tr data-model="total">
            <th>Total</th>
            <th className="num">{formatInt(total.calls)}</th>
            <th className="num">{formatInt(total.inputTokens)}</th>
            <th className="num">{formatInt(total.outputTokens)}</th>
            <th className="num">{formatUsd(total.estCostUsd)}</th>
          </tr>
        </tfoot>
      )}
    </table>
  );
}
