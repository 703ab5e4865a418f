import { spawn, spawnSync } from "node:child_process";
import axios from "axios";
import got from "got";
import { describe, expect, it } from "vitest";
import type { OrderPaidEvent } from "../../src/domain/order-paid.ts";
import { orderPaidEvent } from "../support/events.ts";
import { gatewayWithEmulator } from "../support/harness.ts";

/**
 * What real HTTP clients send in their own default JSON mode must be
 * accepted: no header is set by hand here beyond what each library's
 * documentation says to write, so the test follows the clients, not us.
 */

const h = gatewayWithEmulator();
const PATH = "/integration/v1/orders/paid";

interface Outcome {
  status: number;
  body: unknown;
}

const curlVersion = spawnSync("curl", ["--version"], { encoding: "utf8" });
const hasCurl = curlVersion.status === 0;
// Without curl its tests are skipped with one line, unless CURL_REQUIRED=1 (CI, .ci/run), where its
// absence fails this file instead of skipping them.
if (!hasCurl) {
  if (process.env.CURL_REQUIRED === "1") throw new Error("CURL_REQUIRED=1 but curl is missing: apt-get install curl");
  console.warn("skipping the curl tests: curl is missing (apt-get install curl)");
}
const [major = 0, minor = 0] = (/^curl (\d+)\.(\d+)/.exec(curlVersion.stdout ?? "") ?? []).slice(1).map(Number);
/** `--json` came with curl 7.82. */
const curlHasJson = hasCurl && (major > 7 || (major === 7 && minor >= 82));
if (hasCurl && !curlHasJson) console.warn(`skipping the curl --json test: curl ${major}.${minor} is older than 7.82`);

/** Runs curl with the event on stdin; the last line of its output is the status it got. */
function curl(args: string[], event: OrderPaidEvent): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn("curl", ["--silent", "--show-error", "--write-out", "\n%{http_code}", ...args]);
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      err += chunk.toString("utf8");
    });
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`curl exited with ${code}: ${err}`));
      const cut = out.lastIndexOf("\n");
      resolve({ status: Number(out.slice(cut + 1)), body: JSON.parse(out.slice(0, cut)) });
    });
    child.stdin.end(JSON.stringify(event));
  });
}

const CLIENTS: Array<[string, (url: string, event: OrderPaidEvent) => Promise<Outcome>]> = [
  [
    "undici fetch (Node's global fetch) with JSON.stringify and Content-Type: application/json",
    async (url, event) => {
      const response = await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(event),
      });
      return { status: response.status, body: await response.json() };
    },
  ],
  [
    "axios.post(url, object)",
    async (url, event) => {
      const response = await axios.post(url, event, { validateStatus: () => true });
      return { status: response.status, body: response.data };
    },
  ],
  [
    "got.post(url, {json: object})",
    async (url, event) => {
      const response = await got.post(url, { json: event, throwHttpErrors: false, retry: { limit: 0 } });
      return { status: response.statusCode, body: JSON.parse(response.body) };
    },
  ],
];

describe("real clients in their default JSON mode", () => {
  it.each(CLIENTS)("%s: 201", async (_name, send) => {
    const event = orderPaidEvent();
    const outcome = await send(`${h.gw.url}${PATH}`, event);
    expect(outcome.status, JSON.stringify(outcome.body)).toBe(201);
    expect(outcome.body).toMatchObject({ event_id: event.event_id, status: "SUCCEEDED" });
  });

  it.skipIf(!curlHasJson)("curl --json: 201", async () => {
    const event = orderPaidEvent();
    const outcome = await curl(["--json", "@-", `${h.gw.url}${PATH}`], event);
    expect(outcome.status, JSON.stringify(outcome.body)).toBe(201);
  });

  it.skipIf(!hasCurl)("curl -H 'Content-Type: application/json' --data-binary: 201", async () => {
    const event = orderPaidEvent();
    const outcome = await curl(
      ["-H", "Content-Type: application/json", "--data-binary", "@-", `${h.gw.url}${PATH}`],
      event,
    );
    expect(outcome.status, JSON.stringify(outcome.body)).toBe(201);
  });
});
