import type { Child } from 'hono/jsx';

/** A column of a DataTable: its header, and what each row shows under it. */
export interface Column<Row> {
  label: string;
  cell: (row: Row) => Child;
  /**
   * `num` for a figure (right-aligned, the header too), `nowrap` for a cell that must not break, `wide` for
   * a long value (running text, a URL, an address) that takes two columns of a stacked row, not one, or a
   * page's own.
   */
  class?: string;
}

export interface DataTableProps<Row> {
  rows: readonly Row[];
  columns: Column<Row>[];
  /** The row's buttons, in a last column headed "Actions". */
  actions?: (row: Row) => Child;
  /** The row's own attributes: the hooks the page's script and the tests find it by, a class. */
  rowAttributes?: (row: Row) => Record<string, string | undefined>;
  /** The table's own attributes, for a page's script. */
  attributes?: Record<string, string>;
  /** Said instead of the table while it has no row: a header over nothing says less than a sentence. */
  empty: Child;
}

/**
 * The dashboard's list of things: a table in a card wide enough for it; in a narrower card
 * (table.stacks-when-narrow in styles.ts, a container query) each row is a block, its cells side by side on a
 * tablet and one under another on a phone, each under or beside its column's name (`data-label`, written
 * here from the column, so a label cannot drift from its header), and no column starts off the card. The
 * table's roles are written out (table, rowgroup, row, columnheader, cell): Safari drops a table's semantics
 * for screen readers when its display is changed, as the stacking does.
 */
export function DataTable<Row>({ rows, columns, actions, rowAttributes, attributes, empty }: DataTableProps<Row>) {
  return (
    <div class="table-wrap">
      {rows.length === 0 ? (
        <p class="empty">{empty}</p>
      ) : (
        <table class="stacks-when-narrow" role="table" {...attributes}>
          <thead role="rowgroup">
            <tr role="row">
              {columns.map((column) => (
                <th scope="col" role="columnheader" class={column.class}>
                  {column.label}
                </th>
              ))}
              {actions ? (
                <th scope="col" role="columnheader" class="num">
                  <span class="muted">Actions</span>
                </th>
              ) : null}
            </tr>
          </thead>
          <tbody role="rowgroup">
            {rows.map((row) => (
              <tr role="row" {...rowAttributes?.(row)}>
                {columns.map((column) => (
                  <td role="cell" class={column.class} data-label={column.label}>
                    {column.cell(row)}
                  </td>
                ))}
                {actions ? (
                  <td role="cell" class="actions">
                    {actions(row)}
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

