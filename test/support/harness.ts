import { afterAll, beforeAll } from "vitest";
import { type OnecEmulator, type OnecEmulatorOptions, startOnecEmulator } from "../../src/onec-emulator/emulator.ts";
import { startTestGateway, type TestGateway } from "./gateway.ts";

export interface GatewayHarness {
  /** The 1C emulator the gateway delivers to. */
  readonly onec: OnecEmulator;
  /** The gateway on 127.0.0.1, its own SQLite file. */
  readonly gw: TestGateway;
}

/**
 * One emulator and one gateway for a test file, started before its tests and
 * closed after them. `env` is the gateway's environment on top of ONEC_URL.
 */
export function gatewayWithEmulator(
  env: Record<string, string> = {},
  emulator: OnecEmulatorOptions = {},
): GatewayHarness {
  let onec: OnecEmulator | undefined;
  let gw: TestGateway | undefined;
  beforeAll(async () => {
    onec = await startOnecEmulator(emulator);
    gw = await startTestGateway({ ONEC_URL: onec.url, ...env });
  });
  afterAll(async () => {
    await gw?.close();
    await onec?.close();
  });
  return {
    get onec() {
      if (onec === undefined) throw new Error("the emulator starts in beforeAll");
      return onec;
    },
    get gw() {
      if (gw === undefined) throw new Error("the gateway starts in beforeAll");
      return gw;
    },
  };
}
