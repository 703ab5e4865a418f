import { describe, expect, it } from "vitest";
import { isValidKey, keyPathSegment } from "../../src/onec/contract/key.ts";

/**
 * The key 1C deduplicates on must reach GET /v1/events/{key} as it is. RFC 3986 §5.2.4 removes the
 * dot-segments "." and ".." from a path, so those two keys could never be looked up (issue 20).
 */
describe("the 1C idempotency key", () => {
  it.each([["."], [".."]])("refuses the dot-segment %j", (key) => {
    expect(isValidKey(key)).toBe(false);
  });

  it("a path made of a dot-segment key is rewritten by the URL standard, which is why it is refused", () => {
    expect(new URL("http://1c.local/base/hs/integration/v1/events/..").pathname).toBe("/base/hs/integration/v1/");
    expect(new URL("http://1c.local/base/hs/integration/v1/events/.").pathname).toBe("/base/hs/integration/v1/events/");
  });

  it.each([["..."], [".a"], ["a.."], ["shop~."], ["x".repeat(300)]])("accepts %j", (key) => {
    expect(isValidKey(key)).toBe(true);
    expect(keyPathSegment(key)).toBe(key);
  });
});
