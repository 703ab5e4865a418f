import { describe, expect, it } from "vitest";
import { orderPaidEvent } from "../support/events.ts";
import { gatewayWithEmulator } from "../support/harness.ts";
import { postEvent } from "../support/http.ts";

/**
 * README's answer map, 502: an event the gateway gave up delivering is
 * answered 502 `delivery-abandoned`, "replayed on every repeat", with
 * `Idempotent-Replayed`. When the end comes within SYNC_WAIT_MS, the first
 * POST already gets it: 1C fails with an error it cannot classify
 * (500 PROCESSING_ERROR), ONEC_ERROR_ATTEMPTS=1 ends the event at that
 * answer, and 1C, asked whether it holds the order (GET /v1/events/{key}),
 * says 404: FAILED_FINAL. Real HTTP on 127.0.0.1, the 1C emulator.
 */
const h = gatewayWithEmulator(
  { ONEC_ERROR_ATTEMPTS: "1", SYNC_WAIT_MS: "10000" },
  { faults: { processingError: "Поле объекта не обнаружено (ВидЦены)" } },
);

describe("an event the gateway gave up delivering", () => {
  it("answers 502 delivery-abandoned to the first POST and the same bytes to a repeat, Idempotent-Replayed false then true", async () => {
    const event = orderPaidEvent();
    const first = await postEvent(h.gw.url, event, { "x-correlation-id": "abandoned-first-1" });
    const repeat = await postEvent(h.gw.url, event, { "x-correlation-id": "abandoned-repeat-1" });

    expect([first.status, first.headers["idempotent-replayed"]]).toEqual([502, "false"]);
    expect([repeat.status, repeat.headers["idempotent-replayed"]]).toEqual([502, "true"]);
    expect(repeat.text).toBe(first.text);
    for (const answer of [first, repeat]) {
      expect(answer.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(String(answer.json().type)).toMatch(/\/delivery-abandoned$/);
    }
    expect(first.headers["x-correlation-id"]).toBe("abandoned-first-1");
    expect(repeat.headers["x-correlation-id"]).toBe("abandoned-repeat-1");
    // docs/api.md: "502 `delivery-abandoned` with 1C's text".
    expect(String(first.json().detail)).toContain("Поле объекта не обнаружено (ВидЦены)");
    // 1C was asked once (ONEC_ERROR_ATTEMPTS=1) and created nothing.
    expect(h.onec.postCount()).toBe(1);
    expect(h.onec.orders()).toHaveLength(0);
  });
});
