import { request } from "undici";

/**
 * The console as a browser-less client sees it: each answer's Set-Cookie
 * lines one by one (an Expires date holds a comma, so they are not joined),
 * forms posted as a browser posts them, and signing in.
 */

export interface ConsoleAnswer {
  status: number;
  headers: Record<string, string>;
  /** Each Set-Cookie line, as sent. */
  setCookies: string[];
  text: string;
}

export async function consoleCall(
  url: string,
  options: { method?: "GET" | "POST"; form?: Record<string, string>; headers?: Record<string, string> } = {},
): Promise<ConsoleAnswer> {
  const response = await request(url, {
    method: options.method ?? (options.form === undefined ? "GET" : "POST"),
    headers: {
      ...(options.form === undefined ? {} : { "content-type": "application/x-www-form-urlencoded" }),
      ...options.headers,
    },
    body: options.form === undefined ? undefined : new URLSearchParams(options.form).toString(),
  });
  const text = await response.body.text();
  const headers: Record<string, string> = {};
  let setCookies: string[] = [];
  for (const [name, value] of Object.entries(response.headers)) {
    if (value === undefined) continue;
    if (name === "set-cookie") setCookies = Array.isArray(value) ? value : [value];
    headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return { status: response.statusCode, headers, setCookies, text };
}

/** A Set-Cookie line taken apart: its name, value and attributes (names as sent, values after `=`). */
export interface SetCookie {
  name: string;
  value: string;
  attributes: Map<string, string>;
}

export function parsedSetCookie(answer: ConsoleAnswer, name: string): SetCookie | undefined {
  for (const line of answer.setCookies) {
    const [pair = "", ...rest] = line.split(";").map((part) => part.trim());
    const eq = pair.indexOf("=");
    if (pair.slice(0, eq) !== name) continue;
    const attributes = new Map<string, string>();
    for (const attribute of rest) {
      const at = attribute.indexOf("=");
      attributes.set(at < 0 ? attribute : attribute.slice(0, at), at < 0 ? "" : attribute.slice(at + 1));
    }
    return { name, value: pair.slice(eq + 1), attributes };
  }
  return undefined;
}

/** `name=value` of the Set-Cookie line for `name`, as a Cookie header would carry it. */
export function cookiePair(answer: ConsoleAnswer, name: string): string | undefined {
  const cookie = parsedSetCookie(answer, name);
  return cookie === undefined ? undefined : `${name}=${cookie.value}`;
}

export function hiddenField(page: string, name: string): string {
  const value = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(page)?.[1];
  if (value === undefined) throw new Error(`no hidden field "${name}" on the page`);
  return value;
}

/** The cookies' names: `__Host-` prefixed over TLS. */
export function consoleCookieNames(overTls: boolean) {
  const prefix = overTls ? "__Host-" : "";
  return { session: `${prefix}gateway_console`, signIn: `${prefix}gateway_console_sign_in` };
}

/**
 * Signs in as a browser does: the form (and its cookie), then the POST.
 * Returns the POST's answer and the session cookie as a Cookie header.
 */
export async function signInAs(
  url: string,
  token: string,
  options: { headers?: Record<string, string>; overTls?: boolean; next?: string } = {},
): Promise<{ answer: ConsoleAnswer; cookie: string }> {
  const names = consoleCookieNames(options.overTls ?? false);
  const form = await consoleCall(`${url}/console/sign-in`, { headers: options.headers });
  const answer = await consoleCall(`${url}/console/sign-in`, {
    form: { csrf: hiddenField(form.text, "csrf"), token, next: options.next ?? "/console" },
    headers: { cookie: cookiePair(form, names.signIn) ?? "", ...options.headers },
  });
  const cookie = cookiePair(answer, names.session);
  if (answer.status !== 303 || cookie === undefined) {
    throw new Error(`sign-in failed: ${answer.status} ${answer.setCookies.join(" | ")}`);
  }
  return { answer, cookie };
}
