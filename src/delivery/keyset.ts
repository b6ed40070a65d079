/**
 * Pages through a source by keyset (`WHERE id > cursor ORDER BY id LIMIT n`), for sources whose
 * rows change while they are read. For example, a successful daily callback advances its row's
 * `daily_date`, so the row leaves the `daily_date < today` filter; OFFSET paging over that filter
 * would skip a row for every row that left before it. A cursor only moves forward, so each row is
 * read once whatever happens behind it.
 *
 * `fetch(after, limit)` returns up to `limit` rows ordered by the cursor column, after `after`
 * (null for the first page); `cursor(row)` reads that column. Paging ends at a short page.
 */
export async function* keyset<R, C>(options: {
  fetch: (after: C | null, limit: number) => R[] | Promise<R[]>;
  cursor: (row: R) => C;
  pageSize?: number;
}): AsyncGenerator<R[]> {
  const pageSize = options.pageSize ?? 500;
  let after: C | null = null;
  for (;;) {
    const rows = await options.fetch(after, pageSize);
    if (rows.length === 0) return;
    yield rows;
    if (rows.length < pageSize) return;
    after = options.cursor(rows[rows.length - 1]!);
  }
}
