import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { alertRules } from "./prometheus-rules.ts";

/**
 * promtool runs the rule tests (`npm run check:alerts`, in .ci/run); this checks the test file
 * itself: every alert of the rule file has a case where it fires and one where it stays quiet.
 */
const rulesUrl = new URL("../../src/observability/alerts/gateway-alerts.yml", import.meta.url);
const testsUrl = new URL("./promtool/gateway-alerts.test.yml", import.meta.url);

interface AlertCase {
  alertname: string;
  exp_alerts?: unknown[];
}

describe("the promtool tests of the alert rules", () => {
  const ruleFile: unknown = parseYaml(readFileSync(rulesUrl, "utf8"));
  const testFile = parseYaml(readFileSync(testsUrl, "utf8")) as {
    rule_files: string[];
    tests: { alert_rule_test?: AlertCase[] }[];
  };
  const cases = testFile.tests.flatMap((test) => test.alert_rule_test ?? []);

  it("load the shipped rule file", () => {
    expect(testFile.rule_files.map((file) => new URL(file, testsUrl).pathname)).toEqual([rulesUrl.pathname]);
  });

  it("make every alert fire once and stay quiet once", () => {
    const untested = alertRules(ruleFile)
      .map((rule) => rule.alert)
      .flatMap((alert) => {
        const mine = cases.filter((c) => c.alertname === alert);
        return [
          ...(mine.some((c) => (c.exp_alerts ?? []).length > 0) ? [] : [`${alert}: never fires`]),
          ...(mine.some((c) => (c.exp_alerts ?? []).length === 0) ? [] : [`${alert}: never quiet`]),
        ];
      });
    expect(alertRules(ruleFile).length).toBeGreaterThanOrEqual(6);
    expect(untested).toEqual([]);
  });
});
