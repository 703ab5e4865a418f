/**
 * The console's two cookies, read and written by hand: the gateway has no
 * cookie plugin, and these need only a name, a value and fixed attributes.
 */

export interface CookieSpec {
  /** The name over plain HTTP; over TLS it gets the `__Secure-` prefix, which browsers accept only with Secure. */
  name: string;
  path: string;
  maxAgeSeconds: number;
}

/**
 * The cookie's name for this request. Over TLS it is `__Secure-…`: a browser
 * keeps a cookie of that name only if it was set Secure over HTTPS, so a
 * network attacker cannot plant one over plain HTTP. Plain HTTP (tests on
 * 127.0.0.1) cannot use the prefix at all.
 */
export function cookieName(spec: CookieSpec, secure: boolean): string {
  return secure ? `__Secure-${spec.name}` : spec.name;
}

/** `Set-Cookie` for `value`: HttpOnly, SameSite=Strict, its path and lifetime, Secure over TLS. */
export function setCookie(spec: CookieSpec, value: string, secure: boolean): string {
  return serialize(spec, value, spec.maxAgeSeconds, secure);
}

/** `Set-Cookie` that makes the browser forget the cookie. */
export function clearCookie(spec: CookieSpec, secure: boolean): string {
  return serialize(spec, "", 0, secure);
}

function serialize(spec: CookieSpec, value: string, maxAgeSeconds: number, secure: boolean): string {
  const attributes = [`Path=${spec.path}`, `Max-Age=${maxAgeSeconds}`, "HttpOnly", "SameSite=Strict"];
  if (secure) attributes.push("Secure");
  return [`${cookieName(spec, secure)}=${value}`, ...attributes].join("; ");
}

/**
 * The value of cookie `name` in a `Cookie` header. Undefined when absent, and
 * also when sent more than once: two cookies of one name (one planted under a
 * narrower path, say) leave no way to tell which is ours, so neither is used.
 */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  const values = header
    .split(";")
    .map((pair) => pair.trim())
    .filter((pair) => pair.indexOf("=") > 0 && pair.slice(0, pair.indexOf("=")) === name)
    .map((pair) => pair.slice(pair.indexOf("=") + 1));
  return values.length === 1 ? values[0] : undefined;
}
