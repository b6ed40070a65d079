/**
 * A statement written with named parameters: `${p("queue")}` in its text becomes `$1`, `$2`, ... in
 * the order the names first appear, and a name used twice is one parameter. `bind` lays the values
 * out in that order, so neither the statement nor its caller counts positions, and a variant of a
 * statement that leaves a parameter out shifts none of the others.
 */
export interface NamedStatement<N extends string> {
  readonly sql: string;
  /** The values in the statement's order; every name the text uses must have one (null included). */
  bind(values: { readonly [K in N]?: unknown }): unknown[];
}

export function named<N extends string>(write: (p: (name: N) => string) => string): NamedStatement<N> {
  const order: N[] = [];
  const sql = write((name) => {
    let at = order.indexOf(name);
    if (at < 0) at = order.push(name) - 1;
    return `$${at + 1}`;
  });
  return {
    sql,
    bind: (values) =>
      order.map((name) => {
        const value = values[name];
        if (value === undefined) throw new Error(`tickwork: no value for the statement's parameter "${name}"`);
        return value;
      }),
  };
}
