import { connect } from "node:net";

/**
 * HTTP/1.1 on a bare socket, for requests a client library would tidy up
 * before sending: repeated headers, bad % escapes, odd Expect values, bytes
 * that are not UTF-8.
 */
export interface RawAnswer {
  status: number;
  /** Lower-cased names; every value a repeated header had. */
  headers: Record<string, string[]>;
  body: string;
}

export interface RawRequest {
  method: string;
  target: string;
  /** Sent as written, in this order, repeats included. */
  headers: readonly string[];
  body?: Buffer | string;
  /** Leave out Connection: close, so that more requests may follow on the connection (pipelining). */
  keepAlive?: boolean;
}

/** The request's bytes, with Host, Content-Length (when there is a body) and Connection: close (unless keepAlive) added. */
export function rawRequestBytes(request: RawRequest): Buffer {
  const body = request.body === undefined ? undefined : Buffer.from(request.body);
  const lines = [
    `${request.method} ${request.target} HTTP/1.1`,
    "Host: gateway.test",
    ...request.headers,
    ...(body === undefined ? [] : [`Content-Length: ${body.length}`]),
    ...(request.keepAlive === true ? [] : ["Connection: close"]),
  ];
  return Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1"), body ?? Buffer.alloc(0)]);
}

/** Sends the bytes on a fresh connection and reads the final answer (1xx answers skipped) until the server closes. */
export async function rawExchange(baseUrl: string, bytes: Buffer): Promise<RawAnswer> {
  const [answer] = parseAnswers(await rawBytesExchange(baseUrl, bytes), 1);
  return answer as RawAnswer;
}

/** Sends the bytes (several requests, pipelined) on a fresh connection and reads every answer until the server closes. */
export async function rawPipelinedExchange(baseUrl: string, bytes: Buffer): Promise<RawAnswer[]> {
  return parseAnswers(await rawBytesExchange(baseUrl, bytes), Number.POSITIVE_INFINITY);
}

/** Everything the server sent on a fresh connection the bytes were written to, until it closed. */
export function rawBytesExchange(baseUrl: string, bytes: Buffer): Promise<Buffer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("close", () => resolve(Buffer.concat(chunks)));
    // The server may close before reading a body it refused: what it sent still counts.
    socket.on("error", (error) => {
      if (chunks.length === 0) reject(error);
    });
  });
}

/** Up to `most` final answers (1xx answers skipped), in the order they were sent; at least one. */
export function parseAnswers(raw: Buffer, most: number): RawAnswer[] {
  const answers: RawAnswer[] = [];
  let rest = raw;
  while (answers.length < most && (answers.length === 0 || rest.length > 0)) {
    const end = rest.indexOf("\r\n\r\n");
    if (end === -1) throw new Error(`no complete answer in ${JSON.stringify(raw.toString("latin1"))}`);
    const [statusLine = "", ...headerLines] = rest.subarray(0, end).toString("latin1").split("\r\n");
    const status = Number(statusLine.split(" ")[1]);
    const headers: Record<string, string[]> = {};
    for (const line of headerLines) {
      const colon = line.indexOf(":");
      const name = line.slice(0, colon).trim().toLowerCase();
      headers[name] = [...(headers[name] ?? []), line.slice(colon + 1).trim()];
    }
    rest = rest.subarray(end + 4);
    if (status >= 100 && status < 200) continue;
    const length = headers["content-length"]?.[0];
    if (headers["transfer-encoding"]?.[0] === "chunked") {
      const { body, used } = dechunk(rest);
      answers.push({ status, headers, body: body.toString("utf8") });
      rest = rest.subarray(used);
    } else {
      const size = length === undefined ? rest.length : Number(length);
      answers.push({ status, headers, body: rest.subarray(0, size).toString("utf8") });
      rest = rest.subarray(size);
    }
  }
  return answers;
}

/** The chunked body at the start of `data`, and how many bytes it took (up to the end of the last chunk). */
function dechunk(data: Buffer): { body: Buffer; used: number } {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = data.indexOf("\r\n", at);
    if (lineEnd === -1) break;
    const size = Number.parseInt(data.subarray(at, lineEnd).toString("latin1"), 16);
    if (!(size > 0)) {
      at = lineEnd + 4;
      break;
    }
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return { body: Buffer.concat(parts), used: Math.min(at, data.length) };
}
