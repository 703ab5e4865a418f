import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

const example = JSON.parse(
  readFileSync(new URL("../../schemas/examples/order-paid.json", import.meta.url), "utf8"),
) as {
  order: { items: { sku: string }[] };
};

/** The example's articles: an emulator started with these as knownSkus refuses NO-SUCH-ARTICLE-<run>. */
export const EXAMPLE_SKUS: readonly string[] = example.order.items.map((item) => item.sku);

export interface BrokenOnec {
  url: string;
  close(): Promise<void>;
}

/**
 * A 1C that breaks the contract in one plain way: it never deduplicates. Every
 * POST creates a new order and answers 201, so the first delivery looks right
 * and the repeat does not. GETs find nothing. Answers are otherwise well formed
 * (JSON, X-Correlation-ID echoed), so what fails is the idempotency alone.
 */
export async function startBrokenOnec(): Promise<BrokenOnec> {
  let sequence = 0;
  return serveJson((req) => {
    if (req.method !== "POST") return { status: 404, body: { error: { code: "NOT_FOUND", message: "nothing here" } } };
    sequence += 1;
    return { status: 201, body: { order: { id: randomUUID(), number: `BRK-${sequence}` } } };
  });
}

/**
 * A 1C that speaks another contract version: GET /v1/health answers {status: ok, contract_version},
 * every other request 404 NOT_FOUND.
 */
export async function startOnecOfVersion(contractVersion: string): Promise<BrokenOnec> {
  return serveJson((req) => {
    const health = req.method === "GET" && req.url?.endsWith("/v1/health") === true;
    return health
      ? { status: 200, body: { status: "ok", contract_version: contractVersion, extension_version: "1.0.0.1" } }
      : { status: 404, body: { error: { code: "NOT_FOUND", message: "nothing here" } } };
  });
}

/**
 * A stand-in 1C on 127.0.0.1:0: reads each request's body to its end, then
 * answers `answer`'s JSON with the X-Correlation-ID echoed (or made).
 */
async function serveJson(answer: (req: IncomingMessage) => { status: number; body: unknown }): Promise<BrokenOnec> {
  const server = createServer((req, res) => {
    const given = req.headers["x-correlation-id"];
    const correlationId = typeof given === "string" && given !== "" ? given : randomUUID();
    req.resume();
    req.on("end", () => {
      const { status, body } = answer(req);
      res.writeHead(status, { "content-type": "application/json; charset=utf-8", "x-correlation-id": correlationId });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
