import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  chromiumAvailable,
  launchChromium,
  type PageTrouble,
  saveScreenshot,
  watchForTrouble,
} from "../support/browser.ts";
import { orderPaidEvent } from "../support/events.ts";
import { gatewayWithEmulator } from "../support/harness.ts";
import { call, postEvent } from "../support/http.ts";
import { OPERATOR, type TestOperator, VIEWER, writeOperatorsFile } from "../support/operators.ts";
import { tempDir } from "../support/temp.ts";

/**
 * The support console driven as a person drives it, in Debian's Chromium, by
 * role and label only: sign in, search, read an event, replay it with a
 * reason, see a viewer refused, see hostile content stay text, sign out.
 */

const SEARCH_LABEL = "Event ID, order number or correlation ID";
const HOSTILE_NAME = "<img src=x onerror=alert(1)>";
/** Set to rewrite the README's screenshot (committed) from this run. */
const README_SCREENSHOT = new URL("./console-event.png", import.meta.url);

describe.skipIf(!chromiumAvailable())("the console in Chromium", { timeout: 30_000 }, () => {
  const dir = tempDir("console-browser-");
  const h = gatewayWithEmulator({
    OPERATORS_FILE: writeOperatorsFile(dir.path, [VIEWER, OPERATOR]),
    DELIVERY_POLL_MS: "50",
  });
  const run = `${process.pid}-${Date.now()}`;
  const delivered = orderPaidEvent((event) => {
    event.order.id = `site-id-${run}`;
    event.order.number = `SO-${run}`;
  });
  const refused = orderPaidEvent((event) => {
    event.order.number = `SO-refused-${run}`;
  });
  const hostile = orderPaidEvent((event) => {
    event.order.customer.name = HOSTILE_NAME;
  });

  let browser: Browser;
  const pages: Array<{ page: Page; trouble: PageTrouble }> = [];

  async function newPage(): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    // Well under the test's own timeout, so a missing element fails with Playwright's account of it.
    page.setDefaultTimeout(10_000);
    pages.push({ page, trouble: await watchForTrouble(page) });
    return { context, page };
  }

  async function signIn(page: Page, who: TestOperator): Promise<void> {
    await page.goto(`${h.gw.url}/console`);
    await page.getByLabel("Token").fill(who.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { level: 1, name: "Events" }).waitFor();
  }

  const eventHeading = (page: Page, eventId: string) =>
    page.getByRole("heading", { level: 1, name: `Event ${eventId}` });

  beforeAll(async () => {
    browser = await launchChromium();
    expect((await postEvent(h.gw.url, delivered)).status).toBe(201);
    expect((await postEvent(h.gw.url, hostile)).status).toBe(201);
    h.onec.setFaults({ knownSkus: ["TEA-001"] }); // the example's MUG-010 is not in 1C yet
    expect((await postEvent(h.gw.url, refused)).status).toBe(422);
    h.onec.setFaults({ knownSkus: null });
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    dir.remove();
  });

  afterEach(() => {
    // Emptied as read: one test's trouble is reported once, by that test.
    const found = pages.map(({ trouble }) => ({
      cspViolations: trouble.cspViolations.splice(0),
      scriptErrors: trouble.scriptErrors.splice(0),
      dialogs: trouble.dialogs.splice(0),
    }));
    for (const trouble of found) expect(trouble).toEqual({ cspViolations: [], scriptErrors: [], dialogs: [] });
  });

  let operator: { context: BrowserContext; page: Page };

  it("signs an operator in with a session cookie, never keeping the token in the page", async () => {
    operator = await newPage();
    const { context, page } = operator;
    await page.goto(`${h.gw.url}/console`);
    await page.getByRole("heading", { level: 1, name: "Sign in" }).waitFor();

    await page.getByLabel("Token").fill("not-anybodys-token-0123456789");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").getByText("That token is not valid").waitFor();
    expect((await context.cookies()).map((cookie) => cookie.name)).not.toContain("gateway_console");

    await page.getByLabel("Token").fill(OPERATOR.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { level: 1, name: "Events" }).waitFor();
    await page.getByText(`Signed in as ${OPERATOR.name} (operator)`).waitFor();

    const session = (await context.cookies()).find((cookie) => cookie.name === "gateway_console");
    expect(session).toMatchObject({ path: "/console", httpOnly: true, sameSite: "Strict" });
    expect(await page.evaluate("JSON.stringify([localStorage.length, sessionStorage.length])")).toBe("[0,0]");
    expect(await page.content()).not.toContain(OPERATOR.token);

    const events = page.getByRole("table", { name: /events, newest first/ });
    await events.getByRole("link", { name: delivered.event_id }).waitFor();
    await saveScreenshot(page, "console-list.png");
  });

  it("finds an event by its event_id and by the site's order number", async () => {
    const { page } = operator;
    await page.getByLabel(SEARCH_LABEL).fill(delivered.event_id);
    await page.getByRole("button", { name: "Search" }).click();
    const results = page.getByRole("table", { name: /Search results/ });
    await results.getByRole("link", { name: delivered.event_id }).waitFor();
    expect(await results.getByRole("link").count()).toBe(1);

    await page.getByLabel(SEARCH_LABEL).fill(`SO-refused-${run}`);
    await page.getByRole("button", { name: "Search" }).click();
    await results.getByRole("link", { name: refused.event_id }).waitFor();
    expect(await results.getByRole("link").count()).toBe(1);
  });

  it("shows an event's status, 1C's refusal in its attempts, and its correlation id", async () => {
    const { page } = operator;
    await page
      .getByRole("table", { name: /Search results/ })
      .getByRole("link", { name: refused.event_id })
      .click();
    await eventHeading(page, refused.event_id).waitFor();
    await page.getByText("Status: FAILED_FINAL").waitFor();
    const attempts = page.getByRole("region", { name: "Attempts" }).getByRole("row");
    expect(await attempts.count()).toBe(2); // the header and one attempt
    const cells = await attempts.nth(1).getByRole("cell").allInnerTexts();
    expect(cells[2]).toBe("rejected");
    expect(cells[3]).toBe("422");
    expect(cells[5]).toBe("UNKNOWN_SKU"); // 1C's own error code (README: the contract with 1C)
    const status = (await call(`${h.gw.url}/integration/v1/orders/paid/${refused.event_id}`)).json();
    await page.getByText(String(status.correlation_id), { exact: true }).waitFor();
    expect(await page.getByRole("region", { name: "Replays" }).getByText("Never replayed.").count()).toBe(1);
  });

  it("replays it with a reason after a confirmation, then shows the new attempt and SUCCEEDED", async () => {
    const { page } = operator;
    const reason = "MUG-010 added to the 1C catalogue";
    await page.getByLabel("Reason").fill(reason);
    await page.getByRole("button", { name: "Replay", exact: true }).click();

    await page.getByRole("heading", { level: 1, name: `Replay event ${refused.event_id}?` }).waitFor();
    expect(h.onec.orders().filter((order) => order.key === refused.event_id)).toHaveLength(0);
    await page.getByRole("button", { name: "Confirm replay" }).click();

    await eventHeading(page, refused.event_id).waitFor();
    // The page follows the event by itself until it ends.
    await page.getByText("Status: SUCCEEDED").waitFor({ timeout: 15_000 });
    const attempts = page.getByRole("region", { name: "Attempts" }).getByRole("row");
    expect(await attempts.count()).toBe(3);
    const second = await attempts.nth(2).getByRole("cell").allInnerTexts();
    expect([second[0], second[2], second[3], second[8]]).toEqual(["2", "delivered", "201", "applied"]);
    const replay = await page
      .getByRole("region", { name: "Replays" })
      .getByRole("row")
      .nth(1)
      .getByRole("cell")
      .allInnerTexts();
    expect(replay.slice(1)).toEqual([OPERATOR.name, reason, "FAILED_FINAL", "no"]);
    expect(h.onec.orders().filter((order) => order.key === refused.event_id)).toHaveLength(1);

    await saveScreenshot(page, "console-event.png");
    // The README's picture: what fits in the window, the body left below the fold.
    if (process.env.UPDATE_README_SCREENSHOT === "1") await page.screenshot({ path: README_SCREENSHOT.pathname });
  });

  it("shows an event body's hostile customer name as text", async () => {
    const { page } = operator;
    await page.getByLabel(SEARCH_LABEL).fill(hostile.event_id);
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByRole("link", { name: hostile.event_id }).click();
    await eventHeading(page, hostile.event_id).waitFor();
    const body = page.getByRole("region", { name: "Body" });
    await body.getByText(HOSTILE_NAME).waitFor();
    expect(await body.getByRole("img").count()).toBe(0);
    expect(await page.getByRole("img").count()).toBe(0);
    // The afterEach check: no dialog opened, no script ran, no CSP violation.
  });

  it("shows a viewer no replay control, masks personal data, and refuses a replay with 403", async () => {
    const { page } = await newPage();
    await signIn(page, VIEWER);
    await page.goto(`${h.gw.url}/console/events/default/${refused.event_id}`);
    await eventHeading(page, refused.event_id).waitFor();
    expect(await page.getByRole("button", { name: /Replay/ }).count()).toBe(0);
    expect(await page.getByLabel("Reason").count()).toBe(0);
    expect(await page.getByRole("link", { name: "Bulk replay" }).count()).toBe(0);
    const body = page.getByRole("region", { name: "Body" });
    await body.getByText('"email": "a***@example.com"').waitFor();
    expect(await body.getByText("anna.smirnova@example.com").count()).toBe(0);

    // The form the viewer does not see, posted anyway with a valid session and token.
    const csrf = await page
      .getByRole("button", { name: "Sign out" })
      .evaluate("(button) => button.form.elements.namedItem('csrf').value");
    const forged = await page.request.post(`${h.gw.url}/console/events/default/${refused.event_id}/replay/confirm`, {
      form: { csrf: String(csrf), reason: "a viewer trying" },
      headers: { origin: h.gw.url },
    });
    expect(forged.status()).toBe(403);
    expect(await forged.text()).toContain(`${VIEWER.name} is a viewer; replaying an event needs operator or admin`);
    const api = await call(`${h.gw.url}/integration/v1/admin/events/${refused.event_id}/replay`, {
      method: "POST",
      body: JSON.stringify({ reason: "a viewer trying" }),
      headers: { "content-type": "application/json", authorization: `Bearer ${VIEWER.token}` },
    });
    expect(api.status).toBe(403);
    const detail = (
      await call(`${h.gw.url}/integration/v1/admin/events/${refused.event_id}`, {
        headers: { authorization: `Bearer ${VIEWER.token}` },
      })
    ).json();
    expect(detail.replays).toHaveLength(1); // the operator's only
  });

  it("signs out: the session ends on the server, and the console asks for a token again", async () => {
    const { context, page } = operator;
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { level: 1, name: "Sign in" }).waitFor();
    expect((await context.cookies()).map((cookie) => cookie.name)).not.toContain("gateway_console");
    await page.goto(`${h.gw.url}/console/events/default/${refused.event_id}`);
    await page.getByRole("heading", { level: 1, name: "Sign in" }).waitFor();
  });
});
