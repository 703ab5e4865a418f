import { afterAll, describe, expect, it } from "vitest";
import { consoleCall, hiddenField, signInAs } from "../support/console-client.ts";
import { orderPaidEvent } from "../support/events.ts";
import { gatewayWithEmulator } from "../support/harness.ts";
import { call, postEvent } from "../support/http.ts";
import { ADMIN, OPERATOR, writeOperatorsFile } from "../support/operators.ts";
import { tempDir } from "../support/temp.ts";

/**
 * README ("Ours and the plugins"): the console's forms are read "only UTF-8".
 * A browser on a windows-1251 page posts its form in windows-1251 and says so
 * in the Content-Type: that form is refused with 415, and nothing it asked for happens.
 */

const dir = tempDir("console-charset-");
const OPERATORS_FILE = writeOperatorsFile(dir.path, [OPERATOR, ADMIN]);
const h = gatewayWithEmulator({ OPERATORS_FILE });
afterAll(() => dir.remove());

/**
 * A string's bytes in windows-1251, percent-encoded as a form field
 * (application/x-www-form-urlencoded). The table is WHATWG Encoding's, read
 * back from TextDecoder, which knows windows-1251 (TextEncoder writes UTF-8 only).
 */
function windows1251FormValue(text: string): string {
  const decoder = new TextDecoder("windows-1251");
  const byteOf = new Map<string, number>();
  for (let byte = 0; byte < 256; byte++) byteOf.set(decoder.decode(Uint8Array.of(byte)), byte);
  return [...text]
    .map((char) => {
      const byte = byteOf.get(char);
      if (byte === undefined) throw new Error(`${char} has no windows-1251 byte`);
      return /[A-Za-z0-9]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
    })
    .join("");
}

async function adminView(eventId: string): Promise<{ status: string; replays: Array<Record<string, unknown>> }> {
  const answer = await call(`${h.gw.url}/integration/v1/admin/events/${eventId}`, {
    headers: { authorization: `Bearer ${ADMIN.token}` },
  });
  expect(answer.status).toBe(200);
  return answer.json() as { status: string; replays: Array<Record<string, unknown>> };
}

describe("the console's forms are read only in UTF-8", () => {
  it("a replay form in windows-1251 is 415 and replays nothing; the same form in UTF-8 replays", async () => {
    // An event 1C refused (FAILED_FINAL): what an operator replays.
    const event = orderPaidEvent();
    h.onec.setFaults({ knownSkus: ["TEA-001"] });
    try {
      expect((await postEvent(h.gw.url, event)).status).toBe(422);
    } finally {
      h.onec.setFaults({ knownSkus: null });
    }
    const { cookie } = await signInAs(h.gw.url, OPERATOR.token);
    const csrf = hiddenField((await consoleCall(`${h.gw.url}/console`, { headers: { cookie } })).text, "csrf");
    const confirm = `${h.gw.url}/console/events/default/${event.event_id}/replay/confirm`;
    const reason = "Исправлен артикул";

    const refused = await call(confirm, {
      method: "POST",
      body: `csrf=${encodeURIComponent(csrf)}&reason=${windows1251FormValue(reason)}`,
      headers: { "content-type": "application/x-www-form-urlencoded; charset=windows-1251", cookie },
    });
    expect(refused.status).toBe(415);
    expect(await adminView(event.event_id)).toMatchObject({ status: "FAILED_FINAL", replays: [] });

    // The control: the same session, token and form, in UTF-8 (charset=UTF-8), is taken.
    const taken = await call(confirm, {
      method: "POST",
      body: new URLSearchParams({ csrf, reason }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded; charset=UTF-8", cookie },
    });
    expect(taken.status).toBe(303);
    expect((await adminView(event.event_id)).replays).toMatchObject([{ requested_by: OPERATOR.name, reason }]);
  });
});
