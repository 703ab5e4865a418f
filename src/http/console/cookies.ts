import type { FastifyReply, FastifyRequest } from "fastify";

/**
 * The console's two cookies, parsed and written by @fastify/cookie; what is
 * ours is their fixed attributes, their names, and refusing a name sent twice.
 */

export interface CookieSpec {
  /** The name over plain HTTP; over TLS it gets the `__Host-` prefix. */
  name: string;
  /** The path over plain HTTP; over TLS it is `/`, as the `__Host-` prefix requires. */
  path: string;
  /** How long the browser keeps it; absent, until the browser closes (a session cookie). */
  maxAgeSeconds?: number;
}

/**
 * The cookie's name for this request. Over TLS it is `__Host-…`: a browser
 * keeps a cookie of that name only if it was set Secure, over HTTPS, with
 * Path=/ and no Domain (RFC 6265bis §4.1.3.2), so neither a network attacker
 * nor a sibling subdomain can plant or shadow one. Plain HTTP (tests on
 * 127.0.0.1) cannot use a prefix at all, and keeps the narrower path instead.
 */
export function cookieName(spec: CookieSpec, secure: boolean): string {
  return secure ? `__Host-${spec.name}` : spec.name;
}

/** HttpOnly, SameSite=Strict, never a Domain; over TLS Secure on Path=/. */
function attributes(spec: CookieSpec, secure: boolean) {
  return { path: secure ? "/" : spec.path, httpOnly: true, sameSite: "strict", secure } as const;
}

export function setCookie(reply: FastifyReply, spec: CookieSpec, value: string, secure: boolean): void {
  reply.setCookie(cookieName(spec, secure), value, {
    ...attributes(spec, secure),
    ...(spec.maxAgeSeconds === undefined ? {} : { maxAge: spec.maxAgeSeconds }),
  });
}

/** Makes the browser forget the cookie. */
export function clearCookie(reply: FastifyReply, spec: CookieSpec, secure: boolean): void {
  reply.clearCookie(cookieName(spec, secure), attributes(spec, secure));
}

/**
 * The cookie's value in this request. Undefined when absent, and also when
 * sent more than once: two cookies of one name (one planted under a narrower
 * path, or by a sibling host over plain HTTP) leave no way to tell which is
 * ours, and the cookie parser would silently take the first.
 */
export function cookieOf(request: FastifyRequest, spec: CookieSpec, secure: boolean): string | undefined {
  const name = cookieName(spec, secure);
  const value = request.cookies[name];
  return value !== undefined && timesSent(request.headers.cookie ?? "", name) === 1 ? value : undefined;
}

/** How many `name=` pairs a Cookie header holds. */
export function timesSent(header: string, name: string): number {
  return header.split(";").filter((pair) => pair.trim().startsWith(`${name}=`)).length;
}
