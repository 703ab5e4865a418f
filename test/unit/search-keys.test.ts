import { describe, expect, it } from "vitest";
import { siteOrderKeys } from "../../src/domain/order-paid.ts";
import { searchKeysOf } from "../../src/register/rules.ts";
import { exampleEvent } from "../support/events.ts";

/**
 * The site's order id and number kept beside an event for the console's
 * search: what a request passes (siteOrderKeys, from the event it parsed) and
 * what an import reads back from a stored body (searchKeysOf) must agree, and
 * the import must take any text an export file may hold.
 */
describe("the site's order keys", () => {
  const example = exampleEvent();

  it("are the example event's order.id and order.number (../shared/examples/order-paid.json: A-100234, 100234)", () => {
    expect(siteOrderKeys(example)).toEqual({ siteOrderId: "A-100234", siteOrderNumber: "100234" });
  });

  it("read back from the stored body are the ones the request passed", () => {
    expect(searchKeysOf(JSON.stringify(example))).toEqual({ site_order_id: "A-100234", site_order_number: "100234" });
  });

  it.each([
    ["text that is not JSON", "{not json"],
    ["JSON that is not an object", '"A-1"'],
    ["null", "null"],
    ["an event without an order", '{"event_id":"e"}'],
    ["an order that is not an object", '{"order":"A-1"}'],
    ["an order whose keys are not strings", '{"order":{"id":7,"number":null}}'],
  ])("are null for %s, without throwing", (_, body) => {
    expect(searchKeysOf(body)).toEqual({ site_order_id: null, site_order_number: null });
  });
});
