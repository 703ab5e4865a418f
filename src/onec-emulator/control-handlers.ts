import type { IncomingMessage, ServerResponse } from "node:http";
import { type EmulatorFaults, parseFaultsPatch } from "./faults.ts";
import { sendError, sendJson, sendNoContent } from "./http-io.ts";
import { decodeJson, readBody } from "./request-body.ts";
import type { EmulatorOrder } from "./store.ts";

/** What the /_emulator/* endpoints need; the same operations the programmatic API offers. */
export interface EmulatorControl {
  orders(): EmulatorOrder[];
  /** Keys of the calls hangAfterCommit holds open now. */
  hanging(): string[];
  readonly faults: EmulatorFaults;
  setFaults(patch: Partial<EmulatorFaults>): void;
  reset(): void;
}

const MAX_PATCH_BYTES = 64 * 1024;

export function handleListOrders(res: ServerResponse, control: EmulatorControl): void {
  sendJson(res, 200, { orders: control.orders() });
}

export function handleListHanging(res: ServerResponse, control: EmulatorControl): void {
  sendJson(res, 200, { keys: control.hanging() });
}

export function handleGetFaults(res: ServerResponse, control: EmulatorControl): void {
  sendJson(res, 200, control.faults);
}

export async function handlePutFaults(
  req: IncomingMessage,
  res: ServerResponse,
  control: EmulatorControl,
): Promise<void> {
  const body = await readBody(req, MAX_PATCH_BYTES);
  if (body.kind === "too_large") {
    sendError(res, 413, "PAYLOAD_TOO_LARGE", `faults patch exceeds ${MAX_PATCH_BYTES} bytes`, { connection: "close" });
    return;
  }
  const json = decodeJson(body.bytes);
  if (!json.ok) {
    sendError(res, 400, "BAD_JSON", json.message);
    return;
  }
  const parsed = parseFaultsPatch(json.value);
  if (!parsed.ok) {
    sendError(res, 400, "BAD_FAULTS", parsed.message);
    return;
  }
  control.setFaults(parsed.patch);
  sendJson(res, 200, control.faults);
}

export function handleReset(res: ServerResponse, control: EmulatorControl): void {
  control.reset();
  sendNoContent(res);
}
