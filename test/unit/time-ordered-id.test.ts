import { describe, expect, it } from "vitest";
import { timeOrderedId } from "../../src/http/time-ordered-id.ts";

/** RFC 9562 §5.7's layout: 48 bits of Unix milliseconds, version 7, 12 random bits, variant 10, 62 random bits. */
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("timeOrderedId: the gateway's own correlation ids (UUIDv7)", () => {
  it("puts the time first as RFC 9562's example does", () => {
    // Appendix A.6: 2022-02-22 19:22:22 UTC is 0x017F22E279B0 ms, shown as 017F22E2-79B0-7…
    const id = timeOrderedId(Date.UTC(2022, 1, 22, 19, 22, 22));
    expect(id).toMatch(UUID_V7);
    expect(id.slice(0, 15)).toBe("017f22e2-79b0-7");
  });

  it("sorts ids of later milliseconds after earlier ones, as text, which is how the register's index orders them", () => {
    const start = Date.UTC(2026, 11, 3);
    const ids = Array.from({ length: 1000 }, (_, i) => timeOrderedId(start + i * 7));
    expect([...ids].sort()).toEqual(ids);
  });

  it("keeps 74 random bits: ids of one millisecond differ", () => {
    const now = Date.now();
    const ids = new Set(Array.from({ length: 10_000 }, () => timeOrderedId(now)));
    expect(ids.size).toBe(10_000);
    for (const id of ids) expect(id).toMatch(UUID_V7);
  });
});
