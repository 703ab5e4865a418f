import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OnecEmulator, startOnecEmulator } from "../../src/onec-emulator/emulator.ts";
import { orderPaidEvent } from "../support/events.ts";
import { postEvent } from "../support/http.ts";
import { type GatewayProcess, spawnGateway } from "../support/process.ts";
import { processBackends, registerDatabases, STARTUP_TIMEOUT_MS } from "../support/process-backends.ts";

/**
 * Issue 25: "MaxListenersExceededWarning: 11 abort listeners added to
 * [AbortSignal]" was seen on stderr whenever 11 or more requests were in
 * flight. The built gateway, on the Node the project targets, with 50
 * requests waiting at once for a slow 1C: nothing on stderr but its own
 * log, and no process warning of any kind.
 */
describe.each(processBackends())("50 requests in flight at once, on $name", { timeout: 60_000 }, (backend) => {
  const databases = registerDatabases(backend);
  let onec: OnecEmulator | undefined;
  let gateway: GatewayProcess | undefined;

  beforeAll(async () => {
    onec = await startOnecEmulator({ faults: { latencyMs: 1500 } });
    gateway = await spawnGateway({ DATABASE_URL: await databases.create(), ONEC_URL: onec.url, SYNC_WAIT_MS: "3000" });
  }, STARTUP_TIMEOUT_MS);
  afterAll(async () => {
    await gateway?.kill();
    await onec?.close();
  });

  it("answers them all and writes no process warning", async () => {
    const running = gateway as GatewayProcess;
    const answers = await Promise.all(Array.from({ length: 50 }, () => postEvent(running.url, orderPaidEvent())));
    expect(answers.map((answer) => answer.status).filter((status) => status !== 201 && status !== 202)).toEqual([]);
    // Node writes its warnings to stderr as "(node:PID) …Warning: …"; the gateway's own lines are JSON.
    expect(running.output.filter((line) => /Warning|\(node:\d+\)/.test(line))).toEqual([]);
  });
});
