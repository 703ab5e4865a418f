import { request } from "undici";
import { afterAll, describe, expect, it } from "vitest";
import { gatewayWithEmulator } from "../support/harness.ts";
import { call } from "../support/http.ts";
import { SHOPIFY_SECRET } from "../support/platforms/shopify.ts";
import { TILDA_SECRET, tildaWebhookPath } from "../support/platforms/tilda.ts";
import { writeSourcesFile } from "../support/sources-file.ts";
import { tempDir } from "../support/temp.ts";

/**
 * A shop owner pastes the webhook URL into the platform, and often opens it
 * in a browser first. The URL exists and takes only POST: RFC 9110 §15.5.6
 * answers such a GET 405 with an Allow header naming the methods the
 * resource takes, where a 404 would say the URL is wrong.
 */

const dir = tempDir();
afterAll(() => dir.remove());
const sourcesFile = writeSourcesFile(dir.path, [
  { sender: "shop-s", platform: "shopify", secrets: [SHOPIFY_SECRET] },
  { sender: "shop-w", platform: "woocommerce", secrets: ["wc_methods_secret_0123456789"], currency: "RUB" },
  { sender: "shop-t", platform: "tilda", secrets: [TILDA_SECRET], currency: "RUB" },
]);
const h = gatewayWithEmulator({ SOURCES_FILE: sourcesFile });

const URLS = [
  ["Shopify", "/integration/v1/webhooks/shopify/shop-s"],
  ["WooCommerce", "/integration/v1/webhooks/woocommerce/shop-w"],
  ["Tilda", tildaWebhookPath("shop-t")],
] as const;

describe("a platform's webhook URL opened in a browser", () => {
  it.each(URLS)(
    "%s: GET is 405 method-not-allowed with Allow: POST, and nothing is recorded",
    async (_platform, path) => {
      const before = (await h.gw.gateway.register.sources.list({ limit: 1000 })).length;
      const answer = await call(`${h.gw.url}${path}`, { headers: { "x-correlation-id": "opened-in-a-browser" } });
      expect(answer.status).toBe(405);
      expect(answer.headers.allow).toBe("POST");
      expect(answer.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(answer.headers["x-correlation-id"]).toBe("opened-in-a-browser");
      expect(answer.json()).toMatchObject({
        type: "/integration/v1/problems/method-not-allowed",
        status: 405,
        code: "GW_ERR_METHOD_NOT_ALLOWED",
        correlation_id: "opened-in-a-browser",
      });
      expect((await h.gw.gateway.register.sources.list({ limit: 1000 })).length).toBe(before);
    },
  );

  it.each(URLS)("%s: HEAD is 405 with Allow: POST and no body", async (_platform, path) => {
    const answer = await request(`${h.gw.url}${path}`, { method: "HEAD" });
    expect(answer.statusCode).toBe(405);
    expect(answer.headers.allow).toBe("POST");
    expect(await answer.body.text()).toBe("");
  });

  it("a URL of no platform stays 404 not-found", async () => {
    const answer = await call(`${h.gw.url}/integration/v1/webhooks/magento/shop-s`);
    expect(answer.status).toBe(404);
    expect(answer.json()).toMatchObject({ type: "/integration/v1/problems/not-found" });
  });

  it("the OpenAPI document gives each webhook URL its POST and a GET that answers 405 with Allow", async () => {
    type Operation = { responses: Record<string, { headers?: Record<string, unknown> }> };
    const document = (await call(`${h.gw.url}/openapi.json`)).json() as {
      paths: Record<string, Record<string, Operation>>;
    };
    const webhookPaths = Object.entries(document.paths).filter(([path]) =>
      path.startsWith("/integration/v1/webhooks/"),
    );
    expect(webhookPaths).toHaveLength(3);
    for (const [path, operations] of webhookPaths) {
      expect(Object.keys(operations).sort(), path).toEqual(["get", "post"]);
      expect(Object.keys(operations.get?.responses?.["405"]?.headers ?? {}), path).toContain("Allow");
    }
  });
});
