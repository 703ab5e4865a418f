import type { Refusal } from "./store.ts";

/** ISO 4217's code reserved for tests: no agreement of any base is in it. */
export const TEST_CURRENCY = "XTS";

/**
 * What 1C's extension says of the event's currency against its order's, which the agreement sets
 * (ПроверитьВалюту in 1c/extension): the site's prices are booked as they are, so another currency is a
 * refusal, never a conversion. `agreementCurrency` null: the agreement is in the event's currency, unless
 * the event is in XTS (an event with no currency at all is then not compared, as the emulator reads only what
 * it needs; the gateway's schema requires one before 1C sees an event). Undefined when the currencies agree.
 */
export function currencyRefusal(agreementCurrency: string | null, eventCurrency: string | null): Refusal | undefined {
  const site = (eventCurrency ?? "").trim().toUpperCase();
  if (agreementCurrency === null) {
    if (site !== TEST_CURRENCY) return undefined;
    return {
      code: "CURRENCY_MISMATCH",
      message: `the site's prices are in ${site} (ISO 4217 number 963, reserved for tests), but no agreement is in it: set ИнтСайт_Соглашение to an agreement in ${site}`,
    };
  }
  if (site === agreementCurrency) return undefined;
  if (site === "") {
    return {
      code: "CURRENCY_MISMATCH",
      message: `the event names no currency (order.currency), so its prices cannot be checked against the order's currency ${agreementCurrency}`,
    };
  }
  return {
    code: "CURRENCY_MISMATCH",
    message: `the site's prices are in ${site}, but the order's currency is ${agreementCurrency}, from its agreement: set ИнтСайт_Соглашение to an agreement in ${site}`,
  };
}
