import { describe, expect, it } from "vitest";
import { repeatedSingletonHeader } from "../../src/http/singleton-headers.ts";

/** rawHeaders as Node gives them: name, value, name, value… in the order they came. */
const raw = (...pairs: Array<[string, string]>) => pairs.flat();

describe("repeatedSingletonHeader", () => {
  it("finds nothing in ordinary requests", () => {
    expect(repeatedSingletonHeader([])).toBeUndefined();
    expect(
      repeatedSingletonHeader(
        raw(
          ["Host", "x"],
          ["Authorization", "Bearer a"],
          ["Content-Type", "application/json"],
          ["Accept", "a"],
          ["Accept", "b"],
          ["Cookie", "a=1"],
          ["Cookie", "b=2"],
        ),
      ),
    ).toBeUndefined();
  });

  it.each([
    [raw(["Authorization", "Bearer a"], ["authorization", "Bearer b"]), "Authorization"],
    [raw(["content-type", "application/json"], ["Host", "x"], ["CONTENT-TYPE", "text/plain"]), "Content-Type"],
    [raw(["Content-Encoding", "identity"], ["Content-Encoding", "identity"]), "Content-Encoding"],
    [raw(["Idempotency-Key", "k"], ["Idempotency-Key", "k"]), "Idempotency-Key"],
  ])("names the header repeated in %j", (rawHeaders, name) => {
    expect(repeatedSingletonHeader(rawHeaders)).toBe(name);
  });

  it("lets a repeated X-Correlation-ID through: a proxy may add its own, and the gateway then makes a fresh id", () => {
    expect(repeatedSingletonHeader(raw(["x-correlation-id", "a"], ["X-Correlation-Id", "b"]))).toBeUndefined();
  });
});
