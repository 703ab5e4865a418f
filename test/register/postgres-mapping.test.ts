import { describe, expect, it } from "vitest";
import { StorageUnavailableError } from "../../src/register/port.ts";
import { parseNotice } from "../../src/register/postgres/change-feed.ts";
import { asStorageError } from "../../src/register/postgres/storage-errors.ts";

/** Pure parts of the PostgreSQL register: which errors mean "cannot record now", and which notices count. */

function failure(code: string): Error {
  return Object.assign(new Error(`failed: ${code}`), { code });
}

describe("PostgreSQL errors", () => {
  it.each([
    ["ECONNREFUSED", "server not listening"],
    ["ECONNRESET", "connection dropped"],
    ["CONNECTION_CLOSED", "the driver lost the connection"],
    ["CONNECT_TIMEOUT", "no connection in time"],
    ["57P01", "admin_shutdown"],
    ["57P03", "cannot_connect_now (starting up)"],
    ["08006", "connection_failure"],
    ["53100", "disk_full"],
    ["53300", "too_many_connections"],
    ["25006", "read-only (a standby)"],
  ])("%s (%s) means cannot record now: StorageUnavailableError, cause kept", (code) => {
    const error = failure(code);
    const mapped = asStorageError(error);
    expect(mapped).toBeInstanceOf(StorageUnavailableError);
    expect((mapped as Error).cause).toBe(error);
  });

  it.each([
    ["23505", "unique_violation"],
    ["42601", "syntax_error"],
    ["23514", "check_violation"],
  ])("%s (%s) is a bug, not an outage: passed on unchanged", (code) => {
    const error = failure(code);
    expect(asStorageError(error)).toBe(error);
  });
});

describe("change notices", () => {
  const valid = { kind: "settled", sender: "shop", eventId: "e-1", status: "SUCCEEDED", origin: "o-1" };

  it("reads a notice of the register", () => {
    expect(parseNotice(JSON.stringify(valid))).toEqual(valid);
  });

  it("reads a notice that retries were brought forward", () => {
    const rescheduled = { kind: "rescheduled", count: 12, origin: "instance-b" };
    expect(parseNotice(JSON.stringify(rescheduled))).toEqual(rescheduled);
  });

  it.each([
    ["not JSON", "{"],
    ["an unknown kind", JSON.stringify({ ...valid, kind: "deleted" })],
    ["an unknown status", JSON.stringify({ ...valid, status: "DONE" })],
    ["no origin", JSON.stringify({ ...valid, origin: undefined })],
    ["a number for an id", JSON.stringify({ ...valid, eventId: 7 })],
    ["a rescheduling without a count", JSON.stringify({ kind: "rescheduled", origin: "b" })],
    ["a rescheduling of nothing", JSON.stringify({ kind: "rescheduled", count: 0, origin: "b" })],
    ["a rescheduling without an origin", JSON.stringify({ kind: "rescheduled", count: 3 })],
  ])("ignores %s", (_, payload) => {
    expect(parseNotice(payload)).toBeUndefined();
  });
});
