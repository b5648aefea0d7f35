/**
 * Plain-text tables for terminals: rows of cells padded into aligned columns. The CLI prints them;
 * the score report's text form is built from them, so `panoptes report` and `npm run demo` line up
 * like every other table the CLI prints.
 * Runs on: Node (core); pure.
 */

export type ColumnAlign = 'left' | 'right';

/**
 * One line per row, columns two spaces apart, trailing spaces trimmed. By default the first column
 * is left-aligned (a name) and the others right-aligned (numbers); `align` says otherwise per column.
 */
export function alignColumns(rows: readonly (readonly string[])[], align: readonly ColumnAlign[] = []): string[] {
  if (rows.length === 0) return [];
  const columns = Math.max(...rows.map((r) => r.length));
  const widths = Array.from({ length: columns }, (_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) =>
    widths
      .map((w, i) => {
        const cell = r[i] ?? '';
        return (align[i] ?? (i === 0 ? 'left' : 'right')) === 'left' ? cell.padEnd(w) : cell.padStart(w);
      })
      .join('  ')
      .trimEnd(),
  );
}
