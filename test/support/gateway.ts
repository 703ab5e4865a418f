import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterEach } from "vitest";
import { loadConfig } from "../../src/config/load-config.ts";
import { createGateway, type Gateway } from "../../src/gateway.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { tempDir } from "./temp.ts";

export interface TestGateway {
  url: string;
  gateway: Gateway;
  databasePath: string;
  /** Every log line the gateway wrote, parsed. */
  logs: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

/** A real gateway on 127.0.0.1:0 with its own SQLite file in a temp folder. */
export async function startTestGateway(env: Record<string, string>): Promise<TestGateway> {
  const dir = env.DATABASE_URL === undefined ? tempDir() : undefined;
  const databasePath = env.DATABASE_URL ?? join(dir?.path ?? "", "gateway.db");
  const config = loadConfig({
    HOST: "127.0.0.1",
    PORT: "0",
    LOG_LEVEL: "info",
    ALLOW_ANONYMOUS: "true",
    ...env,
    DATABASE_URL: databasePath,
  });
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString("utf8").split("\n")) if (line !== "") logs.push(JSON.parse(line));
      callback();
    },
  });
  const gateway = await createGateway(config, createLogger(config.logLevel, sink));
  await gateway.app.listen({ host: config.host, port: config.port });
  const { port } = gateway.app.server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    gateway,
    databasePath,
    logs,
    close: async () => {
      await gateway.close();
      dir?.remove();
    },
  };
}

/**
 * Starts test gateways on `defaults` (each call may override them) and closes
 * every one after the test that started it. Call it at a file's or a
 * describe's top level: it registers the afterEach.
 */
export function gatewaysPerTest(
  defaults: Record<string, string>,
): (env?: Record<string, string>) => Promise<TestGateway> {
  const started: TestGateway[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((gateway) => gateway.close()));
  });
  return async (env = {}) => {
    const gateway = await startTestGateway({ ...defaults, ...env });
    started.push(gateway);
    return gateway;
  };
}
