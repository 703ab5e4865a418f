/**
 * Dotted paths into parsed JSON: "order.items.0.sku". A segment of digits
 * indexes an array; "" is the value itself.
 */

export function getPath(value: unknown, path: string): unknown {
  let current = value;
  for (const segment of segments(path)) {
    if (Array.isArray(current) && /^\d+$/.test(segment)) current = current[Number(segment)];
    else if (isObject(current) && Object.hasOwn(current, segment)) current = current[segment];
    else return undefined;
  }
  return current;
}

/**
 * Sets (or, with undefined, removes) the value at `path` in place. False when
 * the parent is not there, or when there is nothing to remove.
 */
export function setPath(root: unknown, path: string, replacement: unknown): boolean {
  const parts = segments(path);
  const last = parts.pop();
  if (last === undefined) return false;
  const parent = getPath(root, parts.join("."));
  if (Array.isArray(parent) && /^\d+$/.test(last)) {
    const index = Number(last);
    if (replacement === undefined) {
      if (index >= parent.length) return false;
      parent.splice(index, 1);
    } else {
      parent[index] = replacement;
    }
    return true;
  }
  if (!isObject(parent)) return false;
  if (replacement === undefined) return Object.hasOwn(parent, last) && Reflect.deleteProperty(parent, last);
  parent[last] = replacement;
  return true;
}

function segments(path: string): string[] {
  return path === "" ? [] : path.split(".");
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
