/**
 * A PostgreSQL array as its text literal ('{"a","b",NULL}'), sent as one
 * parameter and cast in the statement (`${arrayLiteral(xs)}::text[]`).
 *
 * Why not a JavaScript array: postgres.js serializes one only once it has
 * fetched the server's array types, a query it runs on every new connection
 * and whose failure it never handles (connection.js: `return
 * fetchArrayTypes()`, its promise dropped). A connection reset during it, as
 * when the server restarts, is then an unhandled rejection, which ends the
 * process. The pool runs with `fetch_types: false` and passes arrays this way.
 *
 * Every element is quoted, so the literal reads the same for text and for
 * bigint columns, and a string "NULL" stays a string; only null is NULL.
 */
export function arrayLiteral(values: readonly (string | number | null)[]): string {
  return `{${values.map(element).join(",")}}`;
}

function element(value: string | number | null): string {
  if (value === null) return "NULL";
  return `"${String(value).replace(/[\\"]/g, (char) => `\\${char}`)}"`;
}
