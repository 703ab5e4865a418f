import { describe, expect, it } from "vitest";
import { gatewayWithEmulator } from "../support/harness.ts";
import { call } from "../support/http.ts";
import { type RawAnswer, rawExchange, rawRequestBytes } from "../support/raw-http.ts";

/**
 * The edges of two limits in README's answer map: "414 | a path segment
 * over 384 characters (no event_id is that long)" and "431 | headers of
 * 16 KiB or more (the URL, names and values counted)": Node's maxHeaderSize
 * (src/app.ts MAX_HEADER_BYTES) counts those bytes and refuses at the limit. Real HTTP on
 * 127.0.0.1; the header sizes over a bare socket, so that no client adds or
 * tidies a header and every counted byte is the test's own.
 */
const h = gatewayWithEmulator();

const STATUS_PATH = "/integration/v1/orders/paid";
const KIB_16 = 16 * 1024;

describe("a path segment's length", () => {
  it("answers a status URL whose event_id segment is 384 characters 404 (an unknown event), and 385 characters 414", async () => {
    const at = await call(`${h.gw.url}${STATUS_PATH}/${"e".repeat(384)}`);
    expect(at.status).toBe(404);
    expect(at.json()).toMatchObject({ type: "/integration/v1/problems/not-found" });

    const over = await call(`${h.gw.url}${STATUS_PATH}/${"e".repeat(385)}`);
    expect(over.status).toBe(414);
    expect(over.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(over.json()).toMatchObject({ type: "/integration/v1/problems/uri-too-long" });
  });
});

describe("the size of the headers", () => {
  const target = "/healthz";
  /** Every header the request carries, as raw-http.ts writes them: its own Host and Connection, then the padding. */
  const fixed: Array<[string, string]> = [
    ["Host", "gateway.test"],
    ["Connection", "close"],
  ];

  /**
   * A GET whose counted bytes (the request target, each header's name and
   * value; not the method, the version, the ": " or the line ends) come to
   * exactly `counted`, made up with one X-Pad header.
   */
  function requestOfSize(counted: number): Promise<RawAnswer> {
    const others = target.length + fixed.reduce((sum, [name, value]) => sum + name.length + value.length, 0);
    const pad = counted - others - "X-Pad".length;
    const bytes = rawRequestBytes({ method: "GET", target, headers: [`X-Pad: ${"p".repeat(pad)}`] });
    // The bytes are what the count says: the head less the request line's method, spaces and version, the separators and line ends.
    const head = bytes.toString("latin1");
    const lines = head.slice(0, head.indexOf("\r\n\r\n")).split("\r\n");
    const requestLine = lines[0] ?? "";
    const headerLines = lines.slice(1);
    expect(headerLines.map((line) => line.slice(0, line.indexOf(":")))).toEqual(["Host", "X-Pad", "Connection"]);
    const countedInBytes =
      (requestLine.split(" ")[1] ?? "").length + headerLines.reduce((sum, line) => sum + line.length - ": ".length, 0);
    expect(countedInBytes).toBe(counted);
    return rawExchange(h.gw.url, bytes);
  }

  it("serves a request one byte under 16 KiB", async () => {
    expect((await requestOfSize(KIB_16 - 1)).status).toBe(200);
  });

  it("refuses 16 KiB and one byte over it with 431, a problem document", async () => {
    for (const counted of [KIB_16, KIB_16 + 1]) {
      const answer = await requestOfSize(counted);
      expect(answer.status).toBe(431);
      expect(answer.headers["content-type"]?.[0]).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(answer.body)).toMatchObject({ type: "/integration/v1/problems/headers-too-large" });
    }
  });
});
