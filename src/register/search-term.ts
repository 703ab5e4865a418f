/** Longer than any key the search matches (event_id and correlation ids stop at 128 characters). */
export const MAX_SEARCH_TERM = 256;

/**
 * How many rows a search may return; 0 when the term cannot match anything,
 * so neither backend asks its database.
 */
export function searchRows(term: string, limit: number): number {
  // No stored key holds U+0000 (the gateway refuses it), and PostgreSQL refuses it in a query.
  if (term.length === 0 || term.length > MAX_SEARCH_TERM || term.includes("\u0000") || !(limit >= 1)) return 0;
  return Math.min(Math.floor(limit), Number.MAX_SAFE_INTEGER);
}
