import type { Exposition } from "./exposition.ts";
import type { PromqlUse } from "./promql.ts";

/** Labels Prometheus attaches to every scraped series, whatever the target exposes. */
const TARGET_LABELS = ["job", "instance"];
/** Series Prometheus makes for each scrape itself: never in a target's /metrics. */
const SCRAPER_SERIES: Record<string, readonly string[]> = { up: TARGET_LABELS };
/** The series a histogram or summary family exposes under other names. */
const FAMILY_SUFFIXES: Record<string, readonly string[]> = {
  histogram: ["_bucket", "_sum", "_count"],
  summary: ["_sum", "_count"],
};

/** What one scrape offers: each family and the labels its samples carry. */
export interface ScrapedFamilies {
  /** A series name → its family: itself, or the histogram or summary it belongs to. */
  familyOf(series: string): string | undefined;
  labelsOf(family: string): ReadonlySet<string>;
}

export function scrapedFamilies(exposition: Exposition): ScrapedFamilies {
  const familyOf = (series: string): string | undefined => {
    if (exposition.types.has(series)) return series;
    for (const [family, type] of exposition.types) {
      if ((FAMILY_SUFFIXES[type] ?? []).some((suffix) => series === family + suffix)) return family;
    }
    return undefined;
  };
  const labels = new Map<string, Set<string>>();
  for (const sample of exposition.samples) {
    const family = familyOf(sample.name);
    if (family === undefined) continue;
    const known = labels.get(family) ?? new Set(TARGET_LABELS);
    for (const name of Object.keys(sample.labels)) known.add(name);
    labels.set(family, known);
  }
  return { familyOf, labelsOf: (family) => labels.get(family) ?? new Set(TARGET_LABELS) };
}

function labelsOfSeries(series: string, scraped: ScrapedFamilies): ReadonlySet<string> | undefined {
  const made = SCRAPER_SERIES[series];
  if (made !== undefined) return new Set(made);
  const family = scraped.familyOf(series);
  return family === undefined ? undefined : scraped.labelsOf(family);
}

/**
 * What an expression uses that the scrape does not have: a metric no `# TYPE`
 * line declares, a label matched on that the metric's samples never carry, a
 * `by` label none of the aggregated metrics carry.
 */
export function coverageProblems(use: PromqlUse, scraped: ScrapedFamilies): string[] {
  const problems: string[] = [];
  for (const { metric, labels } of use.selectors) {
    const carried = labelsOfSeries(metric, scraped);
    if (carried === undefined) {
      problems.push(`unknown metric ${metric}`);
      continue;
    }
    for (const label of labels.filter((l) => !carried.has(l))) problems.push(`${metric} has no label ${label}`);
  }
  for (const { labels, metrics } of use.groupings) {
    const carried = new Set([
      ...TARGET_LABELS,
      ...metrics.flatMap((metric) => [...(labelsOfSeries(metric, scraped) ?? [])]),
    ]);
    for (const label of labels.filter((l) => !carried.has(l))) {
      problems.push(`by (${label}): no label of that name on ${metrics.join(", ")}`);
    }
  }
  return problems;
}
