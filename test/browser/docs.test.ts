import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  chromiumAvailable,
  launchChromium,
  type PageTrouble,
  saveScreenshot,
  watchForTrouble,
} from "../support/browser.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";

/**
 * Issue 22, "What to build" 3: "the API reference from a well-kept UI package
 * (Scalar or Swagger UI) instead of the hand-written renderer". The page at
 * /docs, opened in Debian's Chromium as a person would: it shows the API's
 * operations from /openapi.json, every request it makes goes to the gateway
 * (offline, self-hosted: no CDN, no fonts or validator elsewhere), and its
 * Content-Security-Policy is never violated.
 */

const ORDERS = "/integration/v1/orders/paid";

describe.skipIf(!chromiumAvailable())("the API reference page in Chromium", { timeout: 90_000 }, () => {
  let gw: TestGateway;
  let browser: Browser;
  let page: Page;
  let trouble: PageTrouble;
  /** Every URL the page asked for, in order, whoever it was for. */
  const requested: string[] = [];
  /** Requests for anyone but the gateway: refused before they leave the browser, and listed. */
  const elsewhere: string[] = [];

  beforeAll(async () => {
    // 1C is never called: the page only reads. The admin routes on, so the document has them too.
    gw = await startTestGateway({
      ONEC_URL: "http://127.0.0.1:9/unreachable",
      ADMIN_TOKEN: "admin-token-for-the-docs-page-0123",
    });
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const origin = new URL(gw.url).origin;
    await context.route(
      (url) => url.protocol !== "data:" && url.origin !== origin,
      async (route) => {
        elsewhere.push(route.request().url());
        await route.abort("blockedbyclient");
      },
    );
    page = await context.newPage();
    // Swagger UI renders the 160 kB document in the page: seconds on a busy two-core machine.
    page.setDefaultTimeout(45_000);
    page.on("request", (request) => requested.push(request.url()));
    trouble = await watchForTrouble(page);
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    await gw?.close();
  });

  it("renders POST /integration/v1/orders/paid from /openapi.json", async () => {
    await page.goto(`${gw.url}/docs`);
    const post = page.locator(".opblock-post").filter({
      has: page.locator(".opblock-summary-path", { hasText: new RegExp(`^${ORDERS}$`) }),
    });
    await post.getByText("POST", { exact: true }).waitFor();
    // The document's own title, read from /openapi.json, not from the page's HTML.
    await page
      .getByRole("heading", { name: /1C order gateway/ })
      .first()
      .waitFor();
    expect(requested).toContain(`${gw.url}/openapi.json`);
    await saveScreenshot(page, "docs.png");
  });

  it("lists every operation of the document, as the hand-written page did", async () => {
    const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => ({ method, path })),
    );
    expect(operations.length).toBeGreaterThanOrEqual(11);
    for (const { method, path } of operations) {
      const summary = page.locator(`.opblock-${method} .opblock-summary-path`).filter({
        hasText: new RegExp(`^${path.replace(/[{}]/g, "\\$&")}$`),
      });
      expect(await summary.count(), `${method.toUpperCase()} ${path}`).toBe(1);
    }
  });

  it("opens an operation and shows its answers and the problem documents", async () => {
    const post = page.locator(".opblock-post").filter({
      has: page.locator(".opblock-summary-path", { hasText: new RegExp(`^${ORDERS}$`) }),
    });
    await post.locator("button.opblock-summary-control").click();
    const responses = post.locator(".responses-table");
    await responses.getByText("409", { exact: true }).first().waitFor();
    await responses.getByText("422", { exact: true }).first().waitFor();
    await saveScreenshot(page, "docs-operation.png");
  });

  it("asked only the gateway for anything, and broke no rule of its policy", () => {
    expect(elsewhere).toEqual([]);
    const origin = new URL(gw.url).origin;
    expect(requested.filter((url) => !url.startsWith("data:") && new URL(url).origin !== origin)).toEqual([]);
    // Its scripts and styles came from the gateway: the bundle, the preset, the loader and the stylesheet.
    for (const asset of ["swagger-ui-bundle.js", "swagger-ui-standalone-preset.js", "swagger-initializer.js"]) {
      expect(requested).toContain(`${gw.url}/docs/static/${asset}`);
    }
    expect(requested).toContain(`${gw.url}/docs/static/swagger-ui.css`);
    expect(trouble).toEqual({ cspViolations: [], scriptErrors: [], dialogs: [] });
  });
});
