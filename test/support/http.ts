import { request } from "undici";

export interface HttpAnswer {
  status: number;
  headers: Record<string, string>;
  text: string;
  json: () => Record<string, unknown>;
}

/** A plain HTTP call over a real socket; headers flattened to strings. */
export async function call(
  url: string,
  options: { method?: "GET" | "POST"; body?: string; headers?: Record<string, string> } = {},
): Promise<HttpAnswer> {
  const response = await request(url, {
    method: options.method ?? (options.body === undefined ? "GET" : "POST"),
    headers: options.headers,
    body: options.body,
  });
  const text = await response.body.text();
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return { status: response.statusCode, headers, text, json: () => JSON.parse(text) };
}

export function postEvent(baseUrl: string, body: unknown, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  return call(`${baseUrl}/integration/v1/orders/paid`, {
    method: "POST",
    body: typeof body === "string" ? body : JSON.stringify(body),
    headers: { "content-type": "application/json", ...headers },
  });
}
