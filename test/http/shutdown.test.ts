import { once } from "node:events";
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { SqliteRegister } from "../../src/register/sqlite/sqlite-register.ts";
import { orderPaidEvent } from "../support/events.ts";
import { startTestGateway } from "../support/gateway.ts";
import { gatewayWithEmulator } from "../support/harness.ts";

const h = gatewayWithEmulator({ SYNC_WAIT_MS: "5000" }, { faults: { latencyMs: 400 } });

function rawPost(body: string): string {
  return (
    "POST /integration/v1/orders/paid HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\n" +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

/** Splits what arrived on one keep-alive connection into status, lower-cased head and body per answer. */
function answers(raw: string): Array<{ status: number; head: string; body: string }> {
  const result: Array<{ status: number; head: string; body: string }> = [];
  let rest = raw;
  while (rest.startsWith("HTTP/1.1 ")) {
    const end = rest.indexOf("\r\n\r\n");
    const head = rest.slice(0, end).toLowerCase();
    const length = Number(/content-length: (\d+)/.exec(head)?.[1] ?? 0);
    const body = Buffer.from(rest.slice(end + 4))
      .subarray(0, length)
      .toString("utf8");
    result.push({ status: Number(head.split(" ")[1]), head, body });
    rest = Buffer.from(rest.slice(end + 4))
      .subarray(length)
      .toString("utf8");
  }
  return result;
}

describe("stopping while requests are in flight", () => {
  it("answers the running request, lets the 1C call finish, records nothing of a late one, and hangs up", async () => {
    const first = orderPaidEvent();
    const second = orderPaidEvent();
    const socket = connect(Number(new URL(h.gw.url).port), "127.0.0.1");
    let received = "";
    socket.on("data", (chunk) => {
      received += chunk.toString("utf8");
    });
    const hungUp = once(socket, "close");

    socket.write(rawPost(JSON.stringify(first)));
    await once(h.onec.events, "post");
    const closed = h.gw.gateway.close();
    socket.write(rawPost(JSON.stringify(second)));
    await hungUp;
    await closed;

    const [a] = answers(received);
    // Stopping ends the wait at once: the event is durable, so the sender gets 202 and its status URL.
    expect(a?.status).toBe(202);
    expect(JSON.parse(a?.body ?? "{}")).toMatchObject({ event_id: first.event_id, status: "PROCESSING" });
    // The late request either got a 503 or was never read: either way nothing of it was recorded.
    const register = new SqliteRegister(h.gw.databasePath);
    try {
      expect(await register.find("default", second.event_id)).toBeUndefined();
      expect((await register.find("default", first.event_id))?.status).toBe("SUCCEEDED");
    } finally {
      await register.close();
    }
    expect(h.onec.orders().map((o) => o.key)).toEqual([first.event_id]);
  });

  it("does not wait for an idle keep-alive client to hang up", async () => {
    const idle = await startTestGateway({ ONEC_URL: h.onec.url });
    const socket = connect(Number(new URL(idle.url).port), "127.0.0.1");
    const hungUp = once(socket, "close");
    socket.write("GET /healthz HTTP/1.1\r\nHost: gateway\r\nConnection: keep-alive\r\n\r\n");
    await once(socket, "data");
    const started = Date.now();
    await idle.close();
    await hungUp;
    // Node's own keep-alive timeout here is 72 s.
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
