/**
 * One page of assistants when the built-in assistant (not stored) joins the tenant's stored ones
 * in a sorted listing. The caller fetches the stored ones from `storedWindow(offset, limit)`; at
 * most one item is not stored, so the page is found among them without counting what lies before.
 */

/** Which stored items to fetch for a page: from one before the page (the built-in may precede it) to one past it (is there more?). */
export function storedWindow(offset: number, limit: number): { start: number; count: number } {
  const start = Math.max(0, offset - 1);
  return { start, count: offset - start + limit + 1 };
}

/**
 * The page [offset, offset+limit) of the stored items merged with `builtin` (null when it does not
 * match the filters), and whether an item follows the page. `stored` are the items fetched for
 * `storedWindow(offset, limit)`, sorted; `before(a, b)` is the listing's order.
 */
export function pageWithBuiltin<T>(
  stored: readonly T[],
  offset: number,
  limit: number,
  builtin: T | null,
  before: (a: T, b: T) => boolean,
): { page: T[]; more: boolean } {
  const { start, count } = storedWindow(offset, limit);
  const indexed: Array<{ at: number; item: T }> = [];
  // The built-in's place in the whole listing: before the first fetched item it precedes (at `start`
  // when that is the first: anything earlier lies before the page anyway), after them all when the
  // stored items ran out, else past this window.
  let builtinAt: number | null = null;
  if (builtin !== null) {
    const j = stored.findIndex((s) => before(builtin, s));
    if (j >= 0) builtinAt = start + j;
    else if (stored.length < count) builtinAt = start + stored.length;
    if (builtinAt !== null) indexed.push({ at: builtinAt, item: builtin });
  }
  stored.forEach((item, x) => indexed.push({ at: start + x + (builtinAt !== null && builtinAt <= start + x ? 1 : 0), item }));
  indexed.sort((a, b) => a.at - b.at);
  return {
    page: indexed.filter((e) => e.at >= offset && e.at < offset + limit).map((e) => e.item),
    more: indexed.some((e) => e.at >= offset + limit),
  };
}
