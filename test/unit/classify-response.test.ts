import { describe, expect, it } from "vitest";
import { classifyError, classifyLookup, classifyResponse, parseRetryAfter } from "../../src/onec/classify-response.ts";

describe("classifyResponse", () => {
  const order = { id: "u-1", number: "ORD-1" };
  it.each([201, 200])("reads %i with an order as delivered", (status) => {
    expect(classifyResponse(status, JSON.stringify({ order }), undefined)).toEqual({
      kind: "delivered",
      httpStatus: status,
      order,
    });
  });

  it("treats a 2xx without an order as retryable, not as success", () => {
    expect(classifyResponse(200, "<html>error</html>", undefined)).toMatchObject({
      kind: "retryable",
      errorClass: "bad_answer",
    });
  });

  it("reads 422 as a final rejection with 1C's code", () => {
    const body = JSON.stringify({ error: { code: "UNKNOWN_SKU", message: "unknown article TEA-9" } });
    expect(classifyResponse(422, body, undefined)).toEqual({
      kind: "rejected",
      httpStatus: 422,
      code: "UNKNOWN_SKU",
      message: "unknown article TEA-9",
    });
  });

  it("reads 1C's 500 PROCESSING_ERROR problem as 1C failing on the event, with its text (contract 3)", () => {
    const problem = JSON.stringify({
      type: "https://github.com/onec-order-gateway/contract#processing-error",
      title: "1C could not process the event",
      status: 500,
      detail: "Поле объекта не обнаружено",
      code: "PROCESSING_ERROR",
      error: { code: "PROCESSING_ERROR", message: "Поле объекта не обнаружено" },
    });
    expect(classifyResponse(500, problem, undefined)).toEqual({
      kind: "errored",
      httpStatus: 500,
      code: "PROCESSING_ERROR",
      message: "Поле объекта не обнаружено",
    });
    // RFC 9457 alone (no contract error object) is read the same way.
    const bare = JSON.stringify({ status: 500, code: "PROCESSING_ERROR", detail: "only detail" });
    expect(classifyResponse(500, bare, undefined)).toMatchObject({ kind: "errored", message: "only detail" });
  });

  it("reads any other 500 (a web server's page, 1C's old INTERNAL) as an outage to retry", () => {
    expect(classifyResponse(500, "<html>Internal Server Error</html>", undefined)).toMatchObject({
      kind: "retryable",
      errorClass: "http_500",
    });
    const internal = JSON.stringify({ error: { code: "INTERNAL", message: "see the event log" } });
    expect(classifyResponse(500, internal, undefined).kind).toBe("retryable");
    const processingOn502 = JSON.stringify({ error: { code: "PROCESSING_ERROR", message: "proxy" } });
    expect(classifyResponse(502, processingOn502, undefined).kind).toBe("retryable");
  });

  it("reads 409 as a conflict and 401/403 as a configuration fault", () => {
    expect(classifyResponse(409, "{}", undefined).kind).toBe("conflict");
    expect(classifyResponse(401, "", undefined).kind).toBe("unauthorized");
    expect(classifyResponse(403, "", undefined).kind).toBe("unauthorized");
  });

  it("reads 503 with Retry-After as retryable with a delay", () => {
    expect(classifyResponse(503, "busy", "7")).toMatchObject({
      kind: "retryable",
      errorClass: "http_503",
      retryAfterMs: 7000,
    });
  });

  it("reads network errors from code or cause.code", () => {
    expect(classifyError(Object.assign(new Error("x"), { code: "ECONNREFUSED" }))).toMatchObject({
      errorClass: "ECONNREFUSED",
    });
    expect(classifyError(new TypeError("fetch failed", { cause: { code: "UND_ERR_SOCKET" } }))).toMatchObject({
      errorClass: "UND_ERR_SOCKET",
    });
    expect(classifyError(new DOMException("t", "TimeoutError"))).toMatchObject({ errorClass: "timeout" });
  });

  it("parses Retry-After as seconds or a date", () => {
    const now = Date.parse("2026-11-30T10:00:00Z");
    expect(parseRetryAfter("3", now)).toBe(3000);
    expect(parseRetryAfter("Mon, 30 Nov 2026 10:00:05 GMT", now)).toBe(5000);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
  });
});

describe("classifyResponse: refusals that a resend cannot fix", () => {
  it.each([
    [413, "TOO_LARGE"],
    [415, "UNSUPPORTED_MEDIA_TYPE"],
    [400, "BAD_REQUEST"],
  ])("reads %i as a final rejection", (status, code) => {
    expect(classifyResponse(status, "", undefined)).toMatchObject({ kind: "rejected", httpStatus: status, code });
  });
});

describe("classifyLookup (GET /v1/events/{key})", () => {
  const order = { id: "u-1", number: "ORD-1" };

  it("reads 200 with an order as found", () => {
    expect(classifyLookup(200, JSON.stringify({ event_id: "k", status: "SUCCEEDED", order }))).toEqual({
      kind: "found",
      httpStatus: 200,
      order,
    });
  });

  it("reads only the contract's 404 NOT_FOUND as absent", () => {
    expect(classifyLookup(404, '{"error":{"code":"NOT_FOUND","message":"no event"}}')).toEqual({
      kind: "absent",
      httpStatus: 404,
    });
  });

  it.each([
    [404, "<html>Not Found</html>"],
    [200, "{}"],
    [503, '{"error":{"code":"UNAVAILABLE"}}'],
    [401, ""],
  ])("treats %i %s as unknown: 1C could not be asked", (status, body) => {
    expect(classifyLookup(status, body).kind).toBe("unknown");
  });
});
