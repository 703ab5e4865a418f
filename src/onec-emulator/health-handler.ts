import type { ServerResponse } from "node:http";
import { CONTRACT_VERSION } from "../onec/contract/version.ts";
import type { EmulatorFaults } from "./faults.ts";
import { sendJson } from "./http-io.ts";

/** What the emulator reports as the 1C extension's version: not a real extension, so all zeros. */
export const EMULATOR_EXTENSION_VERSION = "0.0.0.0";

/** GET /v1/health: the service is up and which contract it speaks; 503 while in maintenance. */
export function handleHealth(res: ServerResponse, faults: EmulatorFaults): void {
  // The emulator has no setup of its own to get wrong: its list of problems is always empty.
  const body = {
    status: "ok",
    contract_version: CONTRACT_VERSION,
    extension_version: EMULATOR_EXTENSION_VERSION,
    problems: [],
  };
  if (!faults.maintenance) {
    sendJson(res, 200, body);
    return;
  }
  sendJson(
    res,
    503,
    {
      ...body,
      status: "maintenance",
      error: { code: "MAINTENANCE", message: "1C is in maintenance mode, retry later" },
    },
    { "retry-after": String(faults.retryAfterSeconds) },
  );
}
