/**
 * An `application/x-www-form-urlencoded` body read the way PHP fills `$_POST`,
 * which is what platforms written for PHP receivers assume: `a[b][0][c]=1`
 * builds nested values, a run of numeric indexes is a list, the last of two
 * equal names wins.
 */
export type FormValue = string | FormValue[] | FormFields;
export interface FormFields {
  [name: string]: FormValue;
}

export type FormRead = { ok: true; fields: FormFields } | { ok: false; detail: string };

/**
 * PHP stops at 64 levels; no platform nests more than a few. The cap keeps a
 * hostile name of 100 000 `[x]` from building a value as deep.
 */
const MAX_DEPTH = 32;

/** `text` is the body already decoded from UTF-8; `+` is a space, as in every form. */
export function readFormBody(text: string): FormRead {
  const parts = text.split("&").filter((part) => part !== "");
  if (parts.length === 0) return { ok: false, detail: "the body is empty" };
  const bare = parts.find((part) => !part.includes("=") || part.startsWith("="));
  if (bare !== undefined) {
    return { ok: false, detail: `the body is not a form: "${bare.slice(0, 40)}" is not name=value` };
  }
  const root: Tree = new Map();
  for (const [name, value] of new URLSearchParams(text)) {
    // URLSearchParams turns percent-encoded bytes that are not UTF-8 into U+FFFD: a name in
    // another code page would reach 1C garbled, so such a body is refused rather than read.
    if ((name.includes("\uFFFD") || value.includes("\uFFFD")) && !text.includes("\uFFFD")) {
      return { ok: false, detail: `the field "${name.slice(0, 40)}" has percent-encoded bytes that are not UTF-8` };
    }
    const path = pathOf(name);
    if (path.length > MAX_DEPTH) {
      return { ok: false, detail: `the field "${name.slice(0, 40)}…" nests deeper than ${MAX_DEPTH} levels` };
    }
    put(root, path, value);
  }
  return { ok: true, fields: fieldsOf(root) };
}

type Tree = Map<string, string | Tree>;

/** `payment[products][0][name]` → payment, products, 0, name. A name that is not of that shape is one plain name. */
function pathOf(name: string): string[] {
  const match = NESTED.exec(name);
  if (match === null) return [name];
  const segments = [...(match[2] as string).matchAll(SEGMENT)].map((segment) => segment[1] as string);
  return [match[1] as string, ...segments];
}

const NESTED = /^([^[\]]+)((?:\[[^[\]]*\])+)$/;
const SEGMENT = /\[([^[\]]*)\]/g;

function put(root: Tree, path: readonly string[], value: string): void {
  let node = root;
  path.forEach((segment, index) => {
    // `a[]=x` appends, as in PHP.
    const key = segment === "" ? String(node.size) : segment;
    if (index === path.length - 1) {
      node.set(key, value);
      return;
    }
    const next = node.get(key);
    if (next instanceof Map) {
      node = next;
    } else {
      // A plain value under a name that is later nested is replaced, as in PHP.
      const child: Tree = new Map();
      node.set(key, child);
      node = child;
    }
  });
}

function fieldsOf(tree: Tree): FormFields {
  return Object.fromEntries([...tree].map(([key, value]) => [key, formValueOf(value)]));
}

function formValueOf(value: string | Tree): FormValue {
  if (typeof value === "string") return value;
  const keys = [...value.keys()];
  if (keys.every((key) => INDEX.test(key))) {
    return keys
      .map(Number)
      .sort((a, b) => a - b)
      .map((index) => formValueOf(value.get(String(index)) as string | Tree));
  }
  return fieldsOf(value);
}

const INDEX = /^(0|[1-9][0-9]{0,8})$/;
