/** A Markdown table with its columns padded, the first left-aligned and the others right-aligned. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0))).join(' | ')} |`;
  return [
    line(header),
    `|${widths.map((width, column) => (column === 0 ? `-${'-'.repeat(width)}-` : `-${'-'.repeat(width)}:`)).join('|')}|`,
    ...rows.map(line),
  ];
}
