import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.ts";
import { decodeEventKeys, encodeEventKeys } from "../../src/http/console/bulk-replay.ts";
import { cookieName, timesSent } from "../../src/http/console/cookies.ts";
import { formFieldsOf } from "../../src/http/console/form-body.ts";
import { parseListQuery } from "../../src/http/console/list-query.ts";
import { consolePaths, safeNextPath, withQuery } from "../../src/http/console/paths.ts";
import { ageText, parseUtcInput, utcInputValue, utcText } from "../../src/http/console/time-text.ts";

const SPEC = { name: "console", path: "/console" };

describe("console cookies", () => {
  it("are __Host- named only over TLS (RFC 6265bis §4.1.3.2: Secure, Path=/, no Domain)", () => {
    expect(cookieName(SPEC, false)).toBe("console");
    expect(cookieName(SPEC, true)).toBe("__Host-console");
  });

  it("are counted by exact name, so a name sent twice can be refused", () => {
    expect(timesSent("a=1; console=abc; consolex=2", "console")).toBe(1);
    expect(timesSent("consolex; console_other=1", "console")).toBe(0);
    expect(timesSent("console=planted; console=mine", "console")).toBe(2);
    expect(timesSent("", "console")).toBe(0);
  });
});

describe("console paths", () => {
  it("put sender and event_id each in their own encoded segment", () => {
    expect(consolePaths.event("shop-a", "evt:1")).toBe("/console/events/shop-a/evt%3A1");
    expect(consolePaths.replayConfirm("shop-a", "e")).toBe("/console/events/shop-a/e/replay/confirm");
    expect(withQuery("/console", { status: "FAILED_FINAL", sender: "", since: undefined })).toBe(
      "/console?status=FAILED_FINAL",
    );
  });

  it("return from sign-in only to a page of the console (no open redirect)", () => {
    expect(safeNextPath("/console/events/default/e1?replayed=1")).toBe("/console/events/default/e1?replayed=1");
    expect(safeNextPath("/console")).toBe("/console");
    expect(safeNextPath("/console?status=FAILED_FINAL")).toBe("/console?status=FAILED_FINAL");
    for (const elsewhere of [
      undefined,
      "https://evil.example/",
      "//evil.example",
      "/console//evil.example",
      "/console/\\evil",
      "/consoleevil",
      "/integration/v1/admin/events",
      "/console/sign-in?next=/console",
      "/console/../integration/v1/admin/events",
      "/console/%2e%2e/integration/v1/admin/events",
      "console/events",
    ]) {
      expect(safeNextPath(elsewhere), String(elsewhere)).toBe("/console");
    }
  });

  it("return a path a Location header can carry: other characters percent-encoded as UTF-8 (issue 22, finding 5)", () => {
    expect(safeNextPath("/console/Ж")).toBe("/console/%D0%96");
    expect(safeNextPath("/console/search?q=Ж")).toBe("/console/search?q=%D0%96");
    expect(safeNextPath('/console/"<x>"')).toBe("/console/%22%3Cx%3E%22");
    expect(safeNextPath("/console/\u0000\u007f")).toBe("/console/%00%7F");
  });
});

describe("console times", () => {
  it("are shown in UTC, said so", () => {
    expect(utcText(Date.UTC(2026, 10, 30, 10, 0, 5, 250))).toBe("2026-11-30 10:00:05 UTC");
    expect(utcInputValue(Date.UTC(2026, 10, 30, 10, 0, 5))).toBe("2026-11-30T10:00:05");
    expect(utcInputValue(Date.UTC(2026, 10, 30, 10, 0, 5, 250))).toBe("2026-11-30T10:00:05.250");
    expect(utcInputValue(undefined)).toBe("");
  });

  it("read what a datetime-local input sends as UTC, and ISO 8601 with a zone as written", () => {
    expect(parseUtcInput("2026-11-30T10:00")).toBe(Date.UTC(2026, 10, 30, 10, 0));
    expect(parseUtcInput("2026-11-30T10:00:05")).toBe(Date.UTC(2026, 10, 30, 10, 0, 5));
    expect(parseUtcInput("2026-11-30T10:00:05.250")).toBe(Date.UTC(2026, 10, 30, 10, 0, 5, 250));
    expect(parseUtcInput("2026-11-30")).toBe(Date.UTC(2026, 10, 30));
    expect(parseUtcInput("2026-11-30T13:00:00+03:00")).toBe(Date.UTC(2026, 10, 30, 10, 0));
    expect(parseUtcInput("2026-11-30T10:00:00Z")).toBe(Date.UTC(2026, 10, 30, 10, 0));
    for (const wrong of [
      "",
      "yesterday",
      "2026-02-30",
      "2026-13-01",
      "2026-11-30T25:00",
      "2026-11-30Z",
      "1764496800000",
    ]) {
      expect(parseUtcInput(wrong), wrong).toBeUndefined();
    }
  });

  it("say how long something waited in the unit that matters", () => {
    expect([0, 45_000, 4 * 60_000, 2 * 3_600_000, 125 * 60_000, 3 * 86_400_000, 74 * 3_600_000].map(ageText)).toEqual([
      "0 s",
      "45 s",
      "4 min",
      "2 h",
      "2 h 5 min",
      "3 d",
      "3 d 2 h",
    ]);
  });
});

describe("console forms and queries", () => {
  it("read each field once and refuse a repeated one", () => {
    // As @fastify/formbody parses `reason=MUG-010+added&csrf=t%2Bk`, and `reason=a&reason=b`.
    const form = formFieldsOf({ reason: "MUG-010 added", csrf: "t+k" });
    expect([form.get("reason"), form.get("csrf"), form.get("force")]).toEqual(["MUG-010 added", "t+k", undefined]);
    expect(() => formFieldsOf({ reason: ["a", "b"] })).toThrow(/"reason" was sent twice/);
  });

  it("read the list's filters and cursor, refusing what cannot be one", () => {
    expect(
      parseListQuery({
        status: "FAILED_FINAL",
        sender: "shop-a",
        since: "2026-11-30T00:00",
        before_received: "1764496800000",
        before_sender: "shop-a",
        before_event: "evt-1",
      }),
    ).toEqual({
      status: "FAILED_FINAL",
      sender: "shop-a",
      since: Date.UTC(2026, 10, 30),
      until: undefined,
      before: { receivedAt: 1_764_496_800_000, sender: "shop-a", eventId: "evt-1" },
    });
    expect(parseListQuery({ status: "", sender: " " })).toEqual({
      status: undefined,
      sender: undefined,
      since: undefined,
      until: undefined,
      before: undefined,
    });
    expect(() => parseListQuery({ status: "LOST" })).toThrow(/status must be one of/);
    expect(() => parseListQuery({ status: ["FAILED_FINAL", "SUCCEEDED"] })).toThrow(/more than once/);
    expect(() => parseListQuery({ sender: "shop a" })).toThrow(/sender/);
    expect(() => parseListQuery({ until: "soon" })).toThrow(/until is not a date/);
    expect(() => parseListQuery({ before_received: "1", before_sender: "s" })).toThrow(/Older/);
  });

  it("carry a bulk preview's events in one field and read back exactly those", () => {
    const keys = [
      { sender: "default", eventId: "evt:1" },
      { sender: "shop-a", eventId: "evt_2026-11-29_shop-a_100234" },
    ];
    expect(encodeEventKeys(keys)).toBe("default~evt:1 shop-a~evt_2026-11-29_shop-a_100234");
    expect(decodeEventKeys(encodeEventKeys(keys))).toEqual(keys);
    for (const damaged of ["", "~evt", "default~", "default~..", "sho p~e", "default~e<script>", "default"]) {
      expect(decodeEventKeys(damaged), damaged).toBeUndefined();
    }
    expect(decodeEventKeys(Array.from({ length: 101 }, (_, i) => `s~e${i}`).join(" "))).toBeUndefined();
  });
});

describe("TRUST_PROXY", () => {
  const base = { ONEC_URL: "http://1c.local/hs", ALLOW_ANONYMOUS: "true" };

  it("is off by default and takes addresses, CIDR ranges and proxy-addr's range names", () => {
    expect(loadConfig(base).trustProxy).toEqual([]);
    expect(loadConfig({ ...base, TRUST_PROXY: "127.0.0.1, 10.0.0.0/8,::1,fd00::/8,loopback" }).trustProxy).toEqual([
      "127.0.0.1",
      "10.0.0.0/8",
      "::1",
      "fd00::/8",
      "loopback",
    ]);
  });

  it('refuses anything else with one line, "true" included (any client could then claim HTTPS)', () => {
    for (const wrong of ["true", "10.0.0.0/33", "fd00::/129", "proxy.local", "10.0.0.1/8/8", "127.0.0.1,,::1"]) {
      expect(() => loadConfig({ ...base, TRUST_PROXY: wrong }), wrong).toThrow(/^TRUST_PROXY must list/);
    }
  });
});
