/** The structure of a Prometheus rule file (prometheus.io/docs/prometheus/latest/configuration/alerting_rules/). */

export interface AlertRule {
  alert: string;
  expr: string;
}

// Prometheus refuses a rule file with a key it does not know; so does this check.
const GROUP_KEYS = new Set(["name", "interval", "limit", "query_offset", "labels", "rules"]);
const RULE_KEYS = new Set(["alert", "record", "expr", "for", "keep_firing_for", "labels", "annotations"]);
/** Prometheus's duration syntax: units from years down to milliseconds, each at most once, in that order. */
const DURATION = /^(?:0|(?:\d+y)?(?:\d+w)?(?:\d+d)?(?:\d+h)?(?:\d+m)?(?:\d+s)?(?:\d+ms)?)$/;
const SEVERITIES = new Set(["critical", "warning", "info"]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function nonEmptyString(value: unknown): value is string {
  return typeof value === "string" && value.trim() !== "";
}

function unknownKeys(value: Record<string, unknown>, allowed: ReadonlySet<string>): string[] {
  return Object.keys(value).filter((key) => !allowed.has(key));
}

function ruleProblems(rule: unknown, where: string): string[] {
  if (!isRecord(rule)) return [`${where}: not a mapping`];
  const name = nonEmptyString(rule.alert) ? rule.alert : where;
  const problems = unknownKeys(rule, RULE_KEYS).map((key) => `${name}: unknown key ${key}`);
  if (!nonEmptyString(rule.alert) || !/^[A-Z][A-Za-z0-9]*$/.test(rule.alert))
    problems.push(`${where}: alert is not a CamelCase name`);
  if (!nonEmptyString(rule.expr)) problems.push(`${name}: no expr`);
  if (typeof rule.for !== "string" || rule.for === "" || !DURATION.test(rule.for)) {
    problems.push(`${name}: for is not a duration: ${String(rule.for)}`);
  }
  const labels = isRecord(rule.labels) ? rule.labels : {};
  if (typeof labels.severity !== "string" || !SEVERITIES.has(labels.severity)) {
    problems.push(`${name}: labels.severity is not one of ${[...SEVERITIES].join(", ")}`);
  }
  const annotations = isRecord(rule.annotations) ? rule.annotations : {};
  for (const key of ["summary", "description"]) {
    if (!nonEmptyString(annotations[key])) problems.push(`${name}: no annotations.${key}`);
  }
  return problems;
}

/** Everything wrong with a parsed rule file; empty when it has the shape Prometheus loads. */
export function ruleFileProblems(document: unknown): string[] {
  if (!isRecord(document) || !Array.isArray(document.groups) || document.groups.length === 0) {
    return ["no groups list"];
  }
  const problems = unknownKeys(document, new Set(["groups"])).map((key) => `unknown top-level key ${key}`);
  const groupNames = new Set<string>();
  const alertNames = new Set<string>();
  for (const [index, group] of document.groups.entries()) {
    if (!isRecord(group)) {
      problems.push(`group ${index}: not a mapping`);
      continue;
    }
    problems.push(...unknownKeys(group, GROUP_KEYS).map((key) => `group ${index}: unknown key ${key}`));
    if (!nonEmptyString(group.name) || groupNames.has(group.name))
      problems.push(`group ${index}: missing or repeated name`);
    else groupNames.add(group.name);
    if (!Array.isArray(group.rules) || group.rules.length === 0) {
      problems.push(`group ${index}: no rules`);
      continue;
    }
    for (const [at, rule] of group.rules.entries()) {
      problems.push(...ruleProblems(rule, `group ${index} rule ${at}`));
      if (isRecord(rule) && typeof rule.alert === "string") {
        if (alertNames.has(rule.alert)) problems.push(`${rule.alert}: repeated`);
        alertNames.add(rule.alert);
      }
    }
  }
  return problems;
}

/** The alerting rules of a file that passed ruleFileProblems. */
export function alertRules(document: unknown): AlertRule[] {
  if (!isRecord(document) || !Array.isArray(document.groups)) return [];
  return document.groups.flatMap((group: unknown) =>
    isRecord(group) && Array.isArray(group.rules)
      ? group.rules.filter(isRecord).map((rule) => ({ alert: String(rule.alert), expr: String(rule.expr) }))
      : [],
  );
}
