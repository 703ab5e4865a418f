import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { SECRET_VARIABLES, withSecretFiles } from "../../src/config/secret-files.ts";
import { envOf, finalStage, readDockerfile } from "./dockerfile.ts";

/**
 * compose.yaml passes its secrets as files (issue 22, finding 7), and Prometheus scrapes the
 * gateway with the gateway's METRICS_TOKEN (finding 10): each NAME_FILE names a secret the
 * service is given, each secret's file exists, and Prometheus reads the gateway's own token file.
 */
const repoRoot = new URL("../../", import.meta.url).pathname;
interface Service {
  environment?: Record<string, string>;
  secrets?: string[];
}
const compose = parseYaml(readFileSync(join(repoRoot, "compose.yaml"), "utf8")) as {
  services: Record<string, Service>;
  secrets: Record<string, { file: string }>;
};
const gateway = compose.services.gateway ?? {};
const environment = gateway.environment ?? {};

describe("compose.yaml's secrets", () => {
  it("gives the gateway no secret in its environment, only NAME_FILE paths under /run/secrets", () => {
    // Empty counts as unset (an image default is cleared that way); any value would be the secret itself.
    for (const name of SECRET_VARIABLES) expect(environment[name] ?? "", name).toBe("");
    const files = Object.entries(environment).filter(([name]) => name.endsWith("_FILE") && name !== "SENDERS_FILE");
    expect(files.map(([name]) => name).sort()).toEqual(["DATABASE_URL_FILE", "METRICS_TOKEN_FILE"]);
    for (const [name, path] of files) {
      const secret = /^\/run\/secrets\/([\w-]+)$/.exec(path)?.[1];
      expect(gateway.secrets, `${name}=${path}`).toContain(secret);
    }
  });

  it("starts with the image's environment under compose's: the image's DATABASE_URL is unset beside DATABASE_URL_FILE", () => {
    // Docker gives the container the image's ENV, then the service's environment over it.
    const merged: Record<string, string> = {
      ...envOf(finalStage(readDockerfile(join(repoRoot, "Dockerfile")))),
      ...environment,
    };
    const secretFiles = new Map(
      Object.entries(compose.secrets).map(([name, { file }]) => [`/run/secrets/${name}`, join(repoRoot, file)]),
    );
    const read = (path: string) => readFileSync(secretFiles.get(path) ?? path, "utf8");
    const resolved = withSecretFiles(merged, read);
    expect(resolved.DATABASE_URL).toBe(readFileSync(secretFiles.get("/run/secrets/database_url") ?? "", "utf8").trim());
  });

  it("has a file for every secret, holding a value", () => {
    for (const [name, { file }] of Object.entries(compose.secrets)) {
      const path = join(repoRoot, file);
      expect(existsSync(path), `${name}: ${file}`).toBe(true);
      expect(readFileSync(path, "utf8").trim(), file).not.toBe("");
    }
  });

  it("has Prometheus send the gateway's METRICS_TOKEN as its bearer token", () => {
    const prometheus = parseYaml(readFileSync(join(repoRoot, "deploy/prometheus/prometheus.yml"), "utf8")) as {
      scrape_configs: { job_name: string; authorization?: { type?: string; credentials_file?: string } }[];
    };
    const job = prometheus.scrape_configs.find((scrape) => scrape.job_name === "onec-gateway");
    expect(job?.authorization?.type ?? "Bearer").toBe("Bearer");
    const path = job?.authorization?.credentials_file ?? "";
    expect(path).toBe(environment.METRICS_TOKEN_FILE);
    const secret = path.replace("/run/secrets/", "");
    expect(compose.services.prometheus?.secrets).toContain(secret);
    expect(
      readFileSync(join(repoRoot, compose.secrets[secret]?.file ?? ""), "utf8").trim().length,
    ).toBeGreaterThanOrEqual(16);
  });
});
