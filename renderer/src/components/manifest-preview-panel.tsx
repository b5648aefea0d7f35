/**
 * A checked manifest as New run shows it: its line-numbered errors, or its vignette count and the
 * first few vignettes.
 * Runs on: renderer.
 */
import type { ManifestPreview } from '../api/types.js';
import { formatInt } from '../format.js';

export function ManifestPreviewPanel({ preview }: { preview: ManifestPreview }) {
  if (preview.issues.length > 0) {
    return (
      <div className="manifest-issues" data-testid="manifest-issues">
        <p>
          <strong>This manifest has errors</strong> — fix these lines and check again:
        </p>
        <ul>
          {preview.issues.map((issue) => (
            <li key={`${issue.line}:${issue.message}`}>
              <span className="line-no">line {issue.line}</span> {issue.message}
            </li>
          ))}
        </ul>
        {preview.issueCount > preview.issues.length ? (
          <p className="muted">
            …and {formatInt(preview.issueCount - preview.issues.length)} more ({formatInt(preview.issueCount)} in all).
          </p>
        ) : null}
      </div>
    );
  }
  return (
    <div className="manifest-preview" data-testid="manifest-preview">
      <p>
        <strong data-testid="vignette-count">{formatInt(preview.count)}</strong> vignettes
        {preview.preview.length > 0 ? `; the first ${preview.preview.length}:` : '.'}
      </p>
      <table className="table compact">
        <tbody>
          {preview.preview.map((v) => (
            <tr key={v.id}>
              <td className="mono nowrap" dir="auto">
                {v.id}
              </td>
              <td className="ellipsis" title={v.prompt} dir="auto">
                {v.prompt}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
