import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OnecEmulator, startOnecEmulator } from "../../src/onec-emulator/emulator.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { call } from "../support/http.ts";
import {
  cartFields,
  formHeaders,
  jsonBody,
  jsonHeaders,
  minipressoPayment,
  nestedForm,
  TILDA_SECRET,
  tildaWebhookPath,
} from "../support/platforms/tilda.ts";
import { createTestDatabase, postgresForTests, type TestDatabase } from "../support/postgres.ts";
import { STARTUP_TIMEOUT_MS } from "../support/process-backends.ts";
import { writeSourcesFile } from "../support/sources-file.ts";
import { tempDir } from "../support/temp.ts";

/**
 * U+0000 from a platform, on both backends. PostgreSQL's text cannot hold it,
 * and a webhook's payload is kept as text in the same batch as other senders'
 * new events: a raw NUL byte once answered 500 there and was accepted on
 * SQLite. Neither JSON (RFC 8259 §7: control characters are escaped) nor a
 * form (the URL-encoded serializer percent-encodes every byte outside its
 * safe set) carries a raw NUL, so such a body is not the platform's format:
 * 400, as any body that does not parse. An escaped one (`\u0000`, `%00`) is
 * text the mapping refuses or quotes, and is kept.
 */

const SENDER = "shop-nul";
const SKUS = { "WAC-MP-GR": "WAC-MP-GR", "WAC-MP-NS": "WAC-MP-NS", "name:Nanopresso Barista Kit": "WAC-NP-BK" };
const backends = postgresForTests().enabled ? ["sqlite", "postgres"] : ["sqlite"];

describe.each(backends)("U+0000 in a platform's delivery, on %s", (backend) => {
  const dir = tempDir();
  let onec: OnecEmulator | undefined;
  let gw: TestGateway | undefined;
  let database: TestDatabase | undefined;
  beforeAll(async () => {
    if (backend === "postgres") postgresForTests().require();
    const source = { sender: SENDER, platform: "tilda", secrets: [TILDA_SECRET], currency: "RUB", skus: SKUS };
    const sourcesFile = writeSourcesFile(dir.path, [source]);
    onec = await startOnecEmulator();
    database = backend === "postgres" ? await createTestDatabase() : undefined;
    const url: Record<string, string> = database === undefined ? {} : { DATABASE_URL: database.url };
    gw = await startTestGateway({ ONEC_URL: onec.url, SOURCES_FILE: sourcesFile, RATE_LIMIT_MAX: "0", ...url });
  }, STARTUP_TIMEOUT_MS);
  afterAll(async () => {
    await gw?.close();
    await onec?.close();
    await database?.drop();
    dir.remove();
  });

  const gateway = (): TestGateway => {
    if (gw === undefined) throw new Error("the gateway starts in beforeAll");
    return gw;
  };
  const send = (body: string, headers = formHeaders()) =>
    call(`${gateway().url}${tildaWebhookPath(SENDER)}`, { method: "POST", body, headers });
  const order = (orderId: string) =>
    nestedForm(minipressoPayment({ orderid: orderId }), cartFields({ tranid: `4717921:${orderId}` }));

  it("refuses a raw NUL byte with 400, records nothing, and fails no other order sent with it", async () => {
    const hostile = [
      { body: `${order("3100000001")}&comment=a\u0000b`, headers: formHeaders() },
      {
        body: jsonBody(minipressoPayment({ orderid: "3100000002" })).replace("Minipresso GR", "Mini\u0000"),
        headers: jsonHeaders(),
      },
    ];
    const others = Array.from({ length: 48 }, (_, n) => order(String(3100000100 + n)));
    const answers = await Promise.all([
      ...hostile.map(({ body, headers }) => send(body, headers)),
      ...others.map((body) => send(body)),
    ]);
    for (const refused of answers.slice(0, hostile.length)) {
      expect(refused.status).toBe(400);
      expect(refused.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(refused.json().detail).toMatch(/U\+0000/);
    }
    for (const taken of answers.slice(hostile.length)) expect(taken.text).toBe("ok");
    const register = gateway().gateway.register;
    for (const orderId of ["3100000001", "3100000002"]) {
      expect(await register.find(SENDER, `tilda:${orderId}`)).toBeUndefined();
    }
    const keys = (await register.sources.list({ sender: SENDER, limit: 1000 })).map((kept) => kept.key);
    expect(keys).not.toContain("tilda:3100000001");
    expect(keys).not.toContain("tilda:3100000002");
    for (let n = 0; n < others.length; n += 1) {
      expect(await register.find(SENDER, `tilda:${3100000100 + n}`)).toBeDefined();
    }
  });

  it("keeps an unknown SKU holding an escaped U+0000 as unmapped, the character shown as U+FFFD", async () => {
    const payment = minipressoPayment({
      orderid: "3100000200",
      products: [{ name: "Minipresso GR", quantity: "1", amount: "24450", price: "24450", sku: "WAC\u0000X" }],
    });
    const body = nestedForm(payment, cartFields({ tranid: "4717921:3100000200" }));
    expect(body).toContain("%00");
    expect((await send(body)).text).toBe("ok");
    const [kept] = await gateway().gateway.register.sources.list({ sender: SENDER, outcome: "unmapped", limit: 10 });
    expect(kept?.key).toBe("tilda:3100000200");
    expect(kept?.reason).toContain('unknown SKU "WAC\uFFFDX"');
    expect(kept?.payload).toBe(body);
  });
});
