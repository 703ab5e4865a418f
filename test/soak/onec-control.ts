import { setTimeout as sleep } from "node:timers/promises";
import { request } from "undici";
import type { EmulatorFaults, EmulatorOrder } from "../../src/onec-emulator/emulator.ts";

// The emulator's control endpoints (/_emulator/*), used from outside its process: every call is
// retried a few times, since a kept-alive socket may still point at the emulator's previous life.

export async function setOnecFaults(onecUrl: string, patch: Partial<EmulatorFaults>): Promise<void> {
  await retried(async () => {
    const response = await request(`${onecUrl}/_emulator/faults`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(patch),
    });
    await response.body.text();
    if (response.statusCode !== 200) throw new Error(`PUT /_emulator/faults answered ${response.statusCode}`);
  });
}

function getJson<T>(url: string): Promise<T> {
  return retried(async () => {
    const response = await request(url);
    if (response.statusCode !== 200) throw new Error(`GET ${url} answered ${response.statusCode}`);
    return (await response.body.json()) as T;
  });
}

/** A few tries, 100 ms apart. */
async function retried<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (attempt >= 5) throw error;
      await sleep(100);
    }
  }
}

/** Idempotency keys of the calls hangAfterCommit holds open now. */
export async function hangingKeys(onecUrl: string): Promise<string[]> {
  return (await getJson<{ keys: string[] }>(`${onecUrl}/_emulator/hanging`)).keys;
}

/** Every order the running emulator holds. */
export async function onecOrders(onecUrl: string): Promise<EmulatorOrder[]> {
  return (await getJson<{ orders: EmulatorOrder[] }>(`${onecUrl}/_emulator/orders`)).orders;
}
