import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { orderPaidEvent } from "../support/events.ts";
import { gatewayWithEmulator } from "../support/harness.ts";
import { postEvent } from "../support/http.ts";
import { scrapeMetrics } from "./exposition.ts";
import { type Dashboard, dashboardProblems, dashboardQueries, substituteVariables } from "./grafana.ts";
import { coverageProblems, type ScrapedFamilies, scrapedFamilies } from "./metric-coverage.ts";
import { alertRules, ruleFileProblems } from "./prometheus-rules.ts";
import { PromqlSyntaxError, parsePromql } from "./promql.ts";

const dashboardUrl = new URL("../../src/observability/dashboards/gateway.json", import.meta.url);
const rulesUrl = new URL("../../src/observability/alerts/gateway-alerts.yml", import.meta.url);
const dashboard = JSON.parse(readFileSync(dashboardUrl, "utf8")) as Dashboard;
const ruleFile: unknown = parseYaml(readFileSync(rulesUrl, "utf8"));

/** Every PromQL expression of both files, named by where it is. */
const expressions = [
  ...dashboardQueries(dashboard).map(({ where, expr }) => ({ where: `dashboard ${where}`, expr })),
  ...alertRules(ruleFile).map(({ alert, expr }) => ({ where: `alert ${alert}`, expr })),
];

function familiesUsed(exprs: readonly string[], scraped: ScrapedFamilies): Set<string> {
  return new Set(
    exprs.flatMap((expr) => parsePromql(expr).selectors.map((s) => scraped.familyOf(s.metric) ?? s.metric)),
  );
}

describe("the alert rule file", () => {
  it("is YAML with the structure Prometheus loads: groups of alerts with expr, for, severity, summary, description", () => {
    expect(ruleFileProblems(ruleFile)).toEqual([]);
    expect(alertRules(ruleFile).length).toBeGreaterThanOrEqual(5);
  });

  it("judges the gateway down both ways the task names: up == 0 and absent()", () => {
    const exprs = alertRules(ruleFile).map((r) => r.expr);
    expect(exprs).toContainEqual(expect.stringMatching(/^up\{job="[^"]+"\} == 0$/));
    expect(exprs).toContainEqual(expect.stringMatching(/^absent\(up\{job="[^"]+"\}\)$/));
  });

  it("refuses YAML that does not parse, and rules without for, severity or with unknown keys", () => {
    expect(() => parseYaml("groups:\n  - name: a\n   rules: [")).toThrow();
    expect(() => parseYaml("groups: []\ngroups: []\n")).toThrow(/unique/);
    const broken = structuredClone(ruleFile) as { groups: Array<{ rules: Array<Record<string, unknown>> }> };
    const [rule] = broken.groups[0]?.rules ?? [];
    if (rule === undefined) throw new Error("the rule file has no rule");
    delete rule.for;
    rule.labels = { severity: "page" };
    rule.expresion = rule.expr;
    expect(ruleFileProblems(broken)).toEqual([
      `${rule.alert}: unknown key expresion`,
      `${rule.alert}: for is not a duration: undefined`,
      `${rule.alert}: labels.severity is not one of critical, warning, info`,
    ]);
    expect(ruleFileProblems({ groups: [] })).toEqual(["no groups list"]);
  });
});

describe("the Grafana dashboard", () => {
  it("has what import and provisioning need: schemaVersion ≥ 39, a Prometheus datasource variable, units on every panel", () => {
    expect(dashboardProblems(dashboard)).toEqual([]);
    const names = (dashboard.templating?.list ?? []).map((v) => v.name);
    expect(names).toEqual(expect.arrayContaining(["datasource", "sender"]));
  });

  it("refuses a dashboard on an old schema, without a unit, with overlapping panels, or using an undeclared variable", () => {
    const broken = structuredClone(dashboard);
    broken.schemaVersion = 38;
    const panel = broken.panels?.find((p) => p.type !== "row");
    if (panel?.fieldConfig?.defaults === undefined) throw new Error("the dashboard has no panel with field defaults");
    delete panel.fieldConfig.defaults.unit;
    const moved = broken.panels?.find((p) => p.type !== "row" && p !== panel);
    if (moved === undefined || panel.gridPos === undefined) throw new Error("the dashboard has one panel");
    moved.gridPos = { ...panel.gridPos };
    expect(dashboardProblems(broken)).toEqual([
      "schemaVersion 38 is under 39",
      `panel "${panel.title}": no unit`,
      `panel "${moved.title}" overlaps "${panel.title}"`,
    ]);
    expect(() => substituteVariables('x{sender=~"$sendr"}', new Set(["sender"]))).toThrow(/\$sendr/);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, meant literally
    expect(substituteVariables('rate(x{sender=~"${sender}"}[$__rate_interval])', new Set(["sender"]))).toBe(
      'rate(x{sender=~".*"}[5m])',
    );
  });
});

describe("every PromQL expression", () => {
  it.each(expressions)("parses with Prometheus's grammar: $where", ({ expr }) => {
    expect(parsePromql(expr).selectors.length).toBeGreaterThan(0);
  });

  it("refuses what is not PromQL", () => {
    expect(() => parsePromql("sum(rate(gateway_events_accepted_total[5m])")).toThrow(PromqlSyntaxError);
    expect(() => parsePromql("gateway_pending_events >")).toThrow(PromqlSyntaxError);
    expect(() => parsePromql("rate(gateway_events_accepted_total[5m] by (sender)")).toThrow(PromqlSyntaxError);
  });
});

describe("the metrics the dashboard and the rules use, against a real scrape", () => {
  const h = gatewayWithEmulator();
  let scraped: ScrapedFamilies;

  beforeAll(async () => {
    // Traffic that makes every labelled series exist, so its labels can be checked too.
    const event = orderPaidEvent();
    expect((await postEvent(h.gw.url, event)).status).toBe(201); // accepted, delivered to 1C
    expect((await postEvent(h.gw.url, event)).status).toBe(200); // replayed
    const changed = structuredClone(event);
    changed.payment.id = "another-payment";
    expect((await postEvent(h.gw.url, changed)).status).toBe(409); // conflict
    expect((await postEvent(h.gw.url, "{not json")).status).toBe(400); // refused
    h.onec.setFaults({ knownSkus: ["NO-SUCH-SKU"] });
    try {
      expect((await postEvent(h.gw.url, orderPaidEvent())).status).toBe(422); // 1C refused: FAILED_FINAL
    } finally {
      h.onec.setFaults({ knownSkus: null });
    }
    scraped = scrapedFamilies(await scrapeMetrics(h.gw.url));
  });

  it("finds every metric and label of the dashboard and the rules in /metrics", () => {
    const problems = Object.fromEntries(
      expressions
        .map(({ where, expr }) => [where, coverageProblems(parsePromql(expr), scraped)] as const)
        .filter(([, found]) => found.length > 0),
    );
    expect(problems).toEqual({});
  });

  it("shows on the dashboard what the issue lists, and alerts on what it lists", () => {
    const onDashboard = familiesUsed(
      dashboardQueries(dashboard).map((q) => q.expr),
      scraped,
    );
    // The panels, in the README's metric names.
    for (const family of [
      "gateway_events_accepted_total",
      "gateway_events_replayed_total",
      "gateway_events_rejected_total",
      "gateway_events_conflicts_total",
      "gateway_pending_events",
      "gateway_oldest_pending_age_seconds",
      "gateway_delivery_attempts_total",
      "gateway_onec_request_duration_seconds",
      "gateway_breaker_state",
      "gateway_failed_final_events",
    ]) {
      expect(onDashboard, family).toContain(family);
    }
    const inRules = familiesUsed(
      alertRules(ruleFile).map((r) => r.expr),
      scraped,
    );
    for (const family of [
      "gateway_oldest_pending_age_seconds",
      "gateway_failed_final_events",
      "gateway_breaker_state",
      "gateway_http_responses_total",
      "up",
    ]) {
      expect(inRules, family).toContain(family);
    }
  });

  it("refuses a metric or a label the scrape does not have", () => {
    const check = (expr: string) => coverageProblems(parsePromql(expr), scraped);
    expect(check("rate(gateway_events_acepted_total[5m])")).toEqual(["unknown metric gateway_events_acepted_total"]);
    expect(check("gateway_pending_events_bucket")).toEqual(["unknown metric gateway_pending_events_bucket"]);
    expect(check('gateway_events_accepted_total{code="x"}')).toEqual([
      "gateway_events_accepted_total has no label code",
    ]);
    expect(check("sum by (sendr) (gateway_events_accepted_total)")).toEqual([
      "by (sendr): no label of that name on gateway_events_accepted_total",
    ]);
    expect(
      check("histogram_quantile(0.9, sum by (le) (rate(gateway_onec_request_duration_seconds_bucket[5m])))"),
    ).toEqual([]);
  });
});
