import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { type ComposeFile, healthCommand } from "./rehearse.ts";

/**
 * compose.yaml against the Compose Specification's JSON schema (the copy the dclint package
 * ships and keeps current), and against the rest of the repository: the services docs/operations.md
 * names, the health checks, the files it mounts, Prometheus' job and rules, Grafana's dashboard.
 */
const repoRoot = new URL("../../", import.meta.url).pathname;
const composeText = readFileSync(join(repoRoot, "compose.yaml"), "utf8");
const compose = parseYaml(composeText) as ComposeFile & {
  services: Record<string, { volumes?: string[]; depends_on?: Record<string, { condition: string }> }>;
};

const require = createRequire(import.meta.url);
const schemaPath = join(dirname(require.resolve("dclint/package.json")), "schemas/compose.schema.json");
// The schema names its draft as https://json-schema.org/draft-07/schema, a spelling Ajv's own copy of the
// meta-schema (http://…/schema#) does not answer to: Ajv's default draft is draft-07, so the name is dropped.
const { $schema: _draft, ...composeSchema } = JSON.parse(readFileSync(schemaPath, "utf8")) as Record<string, unknown>;
const validate = new Ajv({ strict: false, allErrors: true }).compile(composeSchema);

function schemaErrors(text: string): string[] {
  if (validate(parseYaml(text))) return [];
  return (validate.errors ?? []).map(
    (error) => `${error.instancePath} ${error.message} ${JSON.stringify(error.params)}`,
  );
}

describe("compose.yaml", () => {
  it("is valid under the Compose Specification's schema", () => {
    expect(schemaErrors(composeText)).toEqual([]);
  });

  it.each([
    ["stop_grace_period: 20s", "stop_grace_perod: 20s"],
    ["condition: service_healthy", "condition: service_ready"],
    ["retries: 3", "retry: 3"],
    ["services:", "service:"],
  ])("a copy with %s changed to %s is not", (from, to) => {
    expect(composeText).toContain(from);
    expect(schemaErrors(composeText.replace(from, to))).not.toEqual([]);
  });

  it("has every service the Deploying table of docs/operations.md names, and no other", () => {
    const operations = readFileSync(join(repoRoot, "docs/operations.md"), "utf8");
    const table = /^\| service \|.*\n\|[-| ]+\|\n((?:\|.*\n)+)/m.exec(operations)?.[1];
    expect(table, "docs/operations.md has a table whose header starts with | service |").toBeDefined();
    const named = [...(table ?? "").matchAll(/^\| `([\w-]+)` \|/gm)].map((match) => match[1]);
    expect(named.sort()).toEqual(Object.keys(compose.services).sort());
  });

  it("checks the gateway's health on /readyz, and every service's health; depends_on waits on services that have one", () => {
    expect(healthCommand(compose.services.gateway ?? {})?.join(" ")).toMatch(/\/readyz/);
    for (const [name, service] of Object.entries(compose.services)) {
      expect(healthCommand(service), `${name} has a healthcheck`).toBeDefined();
      for (const [dependency, { condition }] of Object.entries(service.depends_on ?? {})) {
        expect(compose.services[dependency], `${name} depends on ${dependency}`).toBeDefined();
        if (condition === "service_healthy") expect(healthCommand(compose.services[dependency] ?? {})).toBeDefined();
      }
    }
  });

  it("mounts files that exist", () => {
    const mounts = Object.values(compose.services).flatMap((service) => service.volumes ?? []);
    for (const mount of mounts.filter((m) => m.startsWith("./"))) {
      expect(existsSync(join(repoRoot, mount.split(":")[0] ?? "")), mount).toBe(true);
    }
  });

  it("has Prometheus scrape the gateway under the job the shipped rules match, with those rules loaded", () => {
    const mounts = compose.services.prometheus?.volumes ?? [];
    const target = (source: string) => mounts.find((m) => m.startsWith(`${source}:`))?.split(":")[1];
    const configPath = target("./deploy/prometheus/prometheus.yml");
    expect(configPath).toBe("/etc/prometheus/prometheus.yml");
    const config = parseYaml(readFileSync(join(repoRoot, "deploy/prometheus/prometheus.yml"), "utf8")) as {
      rule_files: string[];
      scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
    };
    expect(config.rule_files).toEqual([target("./src/observability/alerts/gateway-alerts.yml")]);
    const rules = readFileSync(join(repoRoot, "src/observability/alerts/gateway-alerts.yml"), "utf8");
    const jobs = new Set([...rules.matchAll(/job="([^"]+)"/g)].map((match) => match[1]));
    expect([...jobs]).toHaveLength(1);
    const job = config.scrape_configs.find((scrape) => jobs.has(scrape.job_name));
    expect(job?.static_configs.flatMap((c) => c.targets)).toEqual(["gateway:8080"]);
  });

  it("has Grafana provision the shipped dashboard from the folder it is mounted in, over the compose Prometheus", () => {
    const mounts = compose.services.grafana?.volumes ?? [];
    const dashboard = mounts.find((m) => m.startsWith("./src/observability/dashboards/gateway.json:"))?.split(":")[1];
    expect(mounts).toContain("./deploy/grafana/provisioning:/etc/grafana/provisioning:ro");
    const providers = parseYaml(
      readFileSync(join(repoRoot, "deploy/grafana/provisioning/dashboards/gateway.yaml"), "utf8"),
    ) as { providers: { options: { path: string } }[] };
    expect(providers.providers.map((p) => p.options.path)).toContain(dirname(dashboard ?? ""));
    const sources = parseYaml(
      readFileSync(join(repoRoot, "deploy/grafana/provisioning/datasources/prometheus.yaml"), "utf8"),
    ) as { datasources: { type: string; url: string }[] };
    expect(sources.datasources).toEqual([
      expect.objectContaining({ type: "prometheus", url: "http://prometheus:9090" }),
    ]);
    expect(compose.services.prometheus).toBeDefined();
  });
});
