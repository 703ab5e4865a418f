import { parser } from "@prometheus-io/lezer-promql";

type SyntaxNode = ReturnType<typeof parser.parse>["topNode"];

/** One vector selector: the metric it names and the labels it matches on. */
export interface Selector {
  metric: string;
  labels: string[];
}

/** The labels of one `by (…)` and the metrics selected inside that aggregation. */
export interface Grouping {
  labels: string[];
  metrics: string[];
}

export interface PromqlUse {
  selectors: Selector[];
  groupings: Grouping[];
}

export class PromqlSyntaxError extends Error {}

/** A PromQL string literal: double or single quotes with Go escapes, or backticks, raw. */
function unquote(literal: string): string {
  if (literal.startsWith("`")) return literal.slice(1, -1);
  const body = literal.slice(1, -1);
  return JSON.parse(`"${literal.startsWith("'") ? body.replaceAll('"', '\\"').replaceAll("\\'", "'") : body}"`);
}

function children(node: SyntaxNode): SyntaxNode[] {
  const found: SyntaxNode[] = [];
  for (let child = node.firstChild; child !== null; child = child.nextSibling) found.push(child);
  return found;
}

function descendants(node: SyntaxNode, name: string): SyntaxNode[] {
  const found: SyntaxNode[] = [];
  const cursor = node.cursor();
  do {
    if (cursor.name === name) found.push(cursor.node);
  } while (cursor.next() && cursor.from < node.to);
  return found;
}

/**
 * A matcher's label name and, for `__name__="…"`, the metric it names. The
 * grammar spells a matcher two ways: `label="v"` and Prometheus 3's quoted
 * `"label"="v"`.
 */
function matcher(node: SyntaxNode, text: string): { label: string; metricName?: string } {
  const nameNode = node.getChild("LabelName") ?? node.getChild("QuotedLabelName")?.getChild("StringLiteral");
  if (nameNode === null || nameNode === undefined) throw new PromqlSyntaxError(`a matcher without a label in ${text}`);
  const raw = text.slice(nameNode.from, nameNode.to);
  const label = nameNode.name === "StringLiteral" ? unquote(raw) : raw;
  const value = node.getChild("StringLiteral");
  const equality = node.getChild("MatchOp")?.getChild("EqlSingle");
  if (label === "__name__" && equality && value)
    return { label, metricName: unquote(text.slice(value.from, value.to)) };
  return { label };
}

function selectorOf(node: SyntaxNode, text: string): Selector {
  const identifier = node.getChild("Identifier");
  let metric = identifier === null ? undefined : text.slice(identifier.from, identifier.to);
  const labels: string[] = [];
  for (const part of children(node.getChild("LabelMatchers") ?? node)) {
    if (part.name === "QuotedLabelName") {
      // `{"metric.name", …}`: Prometheus 3's quoted metric name.
      const literal = part.getChild("StringLiteral");
      if (literal !== null) metric = unquote(text.slice(literal.from, literal.to));
    } else if (part.name === "UnquotedLabelMatcher" || part.name === "QuotedLabelMatcher") {
      const { label, metricName } = matcher(part, text);
      if (metricName !== undefined) metric = metricName;
      else if (label !== "__name__") labels.push(label);
    }
  }
  if (metric === undefined) {
    throw new PromqlSyntaxError(
      `a selector without a metric name cannot be checked: ${text.slice(node.from, node.to)}`,
    );
  }
  return { metric, labels };
}

function groupingOf(node: SyntaxNode, text: string): Grouping | undefined {
  const modifier = node.getChild("AggregateModifier");
  if (modifier === null || modifier.getChild("By") === null) return undefined;
  const labels = (modifier.getChild("GroupingLabels")?.getChildren("LabelName") ?? []).map((n) =>
    text.slice(n.from, n.to),
  );
  const metrics = descendants(node, "VectorSelector").map((n) => selectorOf(n, text).metric);
  return { labels, metrics };
}

/**
 * Parses with Prometheus's own grammar (the one its UI uses). Lezer recovers
 * from errors rather than throwing, so any error node in the tree is a
 * syntax error. It checks syntax, not types: `rate(x)` without a range parses.
 */
export function parsePromql(text: string): PromqlUse {
  if (text.trim() === "") throw new PromqlSyntaxError("empty expression");
  const tree = parser.parse(text);
  const cursor = tree.cursor();
  do {
    if (cursor.type.isError) {
      throw new PromqlSyntaxError(
        `syntax error at ${cursor.from}: ${text.slice(0, cursor.from)}⚠${text.slice(cursor.from)}`,
      );
    }
  } while (cursor.next());
  const selectors = descendants(tree.topNode, "VectorSelector").map((n) => selectorOf(n, text));
  const groupings = descendants(tree.topNode, "AggregateExpr").flatMap((n) => groupingOf(n, text) ?? []);
  return { selectors, groupings };
}
