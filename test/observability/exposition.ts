import { expect } from "vitest";
import { call } from "../support/http.ts";

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A Prometheus text exposition: each family's declared type, and every sample. */
export interface Exposition {
  types: Map<string, string>;
  samples: Sample[];
}

const ESCAPES: Record<string, string> = { "\\": "\\", '"': '"', n: "\n" };

/** `{a="x",b="y\"z"}` from `at` (on the brace): the labels and where the closing brace ends. */
function readLabels(line: string, at: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = at + 1;
  while (line[i] !== "}") {
    const equals = line.indexOf("=", i);
    const name = line.slice(i, equals);
    if (line[equals + 1] !== '"') throw new Error(`unquoted value of ${name} in: ${line}`);
    let value = "";
    for (i = equals + 2; line[i] !== '"'; i++) {
      if (i >= line.length) throw new Error(`unterminated value of ${name} in: ${line}`);
      value += line[i] === "\\" ? (ESCAPES[line[++i] ?? ""] ?? "") : line[i];
    }
    labels[name] = value;
    i += 1;
    if (line[i] === ",") i += 1;
  }
  return { labels, end: i + 1 };
}

export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line.startsWith("# TYPE ")) {
      const [name, type] = line.slice("# TYPE ".length).split(" ");
      if (name !== undefined && type !== undefined) types.set(name, type);
      continue;
    }
    if (line === "" || line.startsWith("#")) continue;
    const brace = line.indexOf("{");
    const space = line.indexOf(" ");
    const name = line.slice(0, brace >= 0 && brace < space ? brace : space);
    const { labels, end } = brace >= 0 && brace < space ? readLabels(line, brace) : { labels: {}, end: space };
    samples.push({ name, labels, value: Number(line.slice(end).trim().split(" ")[0]) });
  }
  return { types, samples };
}

/** GET /metrics over HTTP, parsed. */
export async function scrapeMetrics(baseUrl: string): Promise<Exposition> {
  const answer = await call(`${baseUrl}/metrics`);
  expect(answer.status).toBe(200);
  return parseExposition(answer.text);
}

/** The value of the one sample with exactly these labels, 0 when there is none (a counter not moved yet). */
export function sampleValue(exposition: Exposition, name: string, labels: Record<string, string>): number {
  const wanted = JSON.stringify(Object.entries(labels).sort());
  const sample = exposition.samples.find(
    (s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === wanted,
  );
  return sample?.value ?? 0;
}
