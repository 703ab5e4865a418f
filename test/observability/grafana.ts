/** Reading a Grafana dashboard's queries and checking what an import and provisioning need. */

export interface DashboardQuery {
  /** Where it came from, for the failure message. */
  where: string;
  /** PromQL with the dashboard's variables substituted. */
  expr: string;
}

interface Target {
  expr?: string;
  datasource?: { uid?: string };
}

interface Panel {
  id?: number;
  type?: string;
  title?: string;
  datasource?: { type?: string; uid?: string };
  gridPos?: { x: number; y: number; w: number; h: number };
  fieldConfig?: { defaults?: { unit?: string } };
  targets?: Target[];
  panels?: Panel[];
}

interface Variable {
  name: string;
  type: string;
  query?: string | { query?: string };
}

export interface Dashboard {
  id?: number | null;
  uid?: string;
  title?: string;
  schemaVersion?: number;
  templating?: { list?: Variable[] };
  panels?: Panel[];
}

/** Grafana's built-in interval variables, as durations PromQL accepts. */
const BUILT_IN_DURATIONS: Record<string, string> = { __rate_interval: "5m", __interval: "1m", __range: "1h" };
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, meant literally
const PROMETHEUS_DATASOURCE = "${datasource}";
/** The datasource variable's type and query; the UI's import offers no __inputs step then. */
const DATASOURCE_TYPE = "prometheus";

/** `$name`, `${name}`, `${name:format}`, `[[name]]`: Grafana's variable syntaxes. */
const VARIABLE = /\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]/g;

/**
 * Replaces Grafana's interval variables with durations and the dashboard's own
 * variables with `.*` (what "All" sends); an undeclared variable is an error,
 * since inside a label value it would still parse and silently match nothing.
 */
export function substituteVariables(expr: string, declared: ReadonlySet<string>): string {
  return expr.replace(VARIABLE, (whole, braced?: string, bare?: string, bracketed?: string) => {
    const name = braced ?? bare ?? bracketed ?? "";
    const duration = BUILT_IN_DURATIONS[name];
    if (duration !== undefined) return duration;
    if (declared.has(name)) return ".*";
    throw new Error(`${whole} is not a variable of the dashboard`);
  });
}

function flatPanels(panels: readonly Panel[]): Panel[] {
  return panels.flatMap((panel) => [panel, ...flatPanels(panel.panels ?? [])]);
}

function variableQuery(variable: Variable): string | undefined {
  return typeof variable.query === "string" ? variable.query : variable.query?.query;
}

/** `label_values(selector, label)` is Grafana's, not PromQL: as `count by (label) (selector)` it is. */
function labelValuesAsPromql(query: string): string {
  const call = /^\s*label_values\((.*),\s*(\w+)\s*\)\s*$/s.exec(query);
  if (call === null) throw new Error(`only label_values(metric, label) variable queries are checked, got ${query}`);
  return `count by (${call[2]}) (${call[1]})`;
}

/** Every PromQL the dashboard sends: each panel target and each query variable. */
export function dashboardQueries(dashboard: Dashboard): DashboardQuery[] {
  const variables = dashboard.templating?.list ?? [];
  const declared = new Set(variables.map((v) => v.name));
  const queries: DashboardQuery[] = [];
  for (const variable of variables.filter((v) => v.type === "query")) {
    const query = variableQuery(variable) ?? "";
    queries.push({
      where: `variable ${variable.name}`,
      expr: substituteVariables(labelValuesAsPromql(query), declared),
    });
  }
  for (const panel of flatPanels(dashboard.panels ?? [])) {
    for (const [index, target] of (panel.targets ?? []).entries()) {
      queries.push({
        where: `panel "${panel.title}" target ${index}`,
        expr: substituteVariables(target.expr ?? "", declared),
      });
    }
  }
  return queries;
}

type Grid = { x: number; y: number; w: number; h: number };

function overlap(a: Grid, b: Grid): boolean {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

/** Grafana's grid is 24 columns; overlapping panels are pushed around on load, not where they were put. */
function layoutProblems(panels: readonly Panel[]): string[] {
  const problems: string[] = [];
  const placed: Array<{ title: string; grid: Grid }> = [];
  for (const { title = "", gridPos: grid } of panels) {
    if (grid === undefined) continue;
    if (grid.x < 0 || grid.w < 1 || grid.x + grid.w > 24) problems.push(`panel "${title}": outside the 24-column grid`);
    const hit = placed.find((other) => overlap(other.grid, grid));
    if (hit !== undefined) problems.push(`panel "${title}" overlaps "${hit.title}"`);
    placed.push({ title, grid });
  }
  return problems;
}

function panelProblems(panel: Panel): string[] {
  const name = `panel "${panel.title}"`;
  const problems: string[] = [];
  if (panel.gridPos === undefined) problems.push(`${name}: no gridPos`);
  if (panel.type === "row") return problems;
  if (panel.datasource?.uid !== PROMETHEUS_DATASOURCE)
    problems.push(`${name}: datasource is not ${PROMETHEUS_DATASOURCE}`);
  if (!panel.fieldConfig?.defaults?.unit) problems.push(`${name}: no unit`);
  if ((panel.targets ?? []).length === 0) problems.push(`${name}: no query`);
  if ((panel.targets ?? []).some((t) => t.datasource !== undefined && t.datasource.uid !== PROMETHEUS_DATASOURCE)) {
    problems.push(`${name}: a target's datasource is not ${PROMETHEUS_DATASOURCE}`);
  }
  return problems;
}

/** What Grafana's import and file provisioning need, and what the task asks of every panel. */
export function dashboardProblems(dashboard: Dashboard): string[] {
  const problems: string[] = [];
  if (typeof dashboard.schemaVersion !== "number" || dashboard.schemaVersion < 39) {
    problems.push(`schemaVersion ${dashboard.schemaVersion} is under 39`);
  }
  // A fixed uid keeps links and re-imports stable; a numeric id belongs to one Grafana's database.
  if (typeof dashboard.uid !== "string" || !/^[\w-]{1,40}$/.test(dashboard.uid)) {
    problems.push("uid is not 1 to 40 letters, digits, _ or -");
  }
  if (dashboard.id !== null && dashboard.id !== undefined) problems.push("id must be null: Grafana assigns it");
  if (!dashboard.title) problems.push("no title");
  const datasource = dashboard.templating?.list?.find((v) => v.name === "datasource");
  if (datasource?.type !== "datasource" || datasource.query !== DATASOURCE_TYPE) {
    problems.push(`no datasource variable of type ${DATASOURCE_TYPE}`);
  }
  const panels = flatPanels(dashboard.panels ?? []);
  const ids = panels.map((p) => p.id);
  if (ids.some((id, at) => id === undefined || ids.indexOf(id) !== at))
    problems.push("a panel id is missing or repeated");
  return [...problems, ...panels.flatMap(panelProblems), ...layoutProblems(panels)];
}
