import { STATUS_CODES } from "node:http";
import { PROBLEM_MEDIA_TYPE } from "./json.ts";
import type {
  ExampleObject,
  HeaderObject,
  JsonObject,
  JsonValue,
  MediaTypeObject,
  OpenApiDocument,
  OperationObject,
  OrRef,
  ParameterObject,
  ResponseObject,
  RetryExample,
} from "./types.ts";

/** A problem type as one response lists it. */
export interface ListedProblem {
  type: string;
  title: string;
  status: number;
  code: string;
  retryable: boolean;
}

export interface ListedOperation {
  method: string;
  path: string;
  operation: OperationObject;
}

/** Every operation of the document, in its order. */
export function operationsOf(doc: OpenApiDocument): ListedOperation[] {
  const list: ListedOperation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (operation !== undefined) list.push({ method, path, operation });
    }
  }
  return list;
}

/** Follows a local `$ref` ("#/components/..."); throws if it does not resolve. */
export function resolvePointer(doc: OpenApiDocument, ref: string): unknown {
  if (!ref.startsWith("#/")) throw new Error(`not a local $ref: ${ref}`);
  let node: unknown = doc;
  for (const raw of ref.slice(2).split("/")) {
    const key = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, key)) {
      throw new Error(`$ref ${ref} does not resolve`);
    }
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function deref<T extends object>(doc: OpenApiDocument, value: OrRef<T>): T {
  return "$ref" in value && typeof value.$ref === "string" ? (resolvePointer(doc, value.$ref) as T) : (value as T);
}

/** The problem types a response can carry, read from its problem+json schema. */
export function problemsOf(doc: OpenApiDocument, response: ResponseObject): ListedProblem[] {
  const schema = response.content?.[PROBLEM_MEDIA_TYPE]?.schema;
  if (schema === undefined) return [];
  const variants = Array.isArray(schema.oneOf) ? (schema.oneOf as JsonValue[]) : [schema];
  return variants.map((variant) => {
    const ref = (variant as JsonObject).$ref;
    const target = typeof ref === "string" ? (resolvePointer(doc, ref) as JsonObject) : (variant as JsonObject);
    const props = (target.properties ?? {}) as Record<string, JsonObject>;
    const constOf = (name: string): JsonValue | undefined => props[name]?.const;
    return {
      type: String(constOf("type")),
      title: String(constOf("title")),
      status: Number(constOf("status")),
      code: String(constOf("code")),
      retryable: constOf("retryable") === true,
    };
  });
}

// ---------------------------------------------------------------- HTML

const esc = (text: string): string =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;");

/** Inline Markdown of our descriptions: `code` and **bold**, on escaped text. */
function inline(text: string): string {
  return esc(text)
    .replace(/`([^`]+)`/g, "<code>$1</code>")
    .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>");
}

/** Block Markdown of our descriptions: paragraphs and "- " lists. */
function markdown(text: string): string {
  return text
    .split(/\n{2,}/)
    .map((block) => {
      const lines = block.split("\n");
      if (lines.every((line) => line.startsWith("- "))) {
        return `<ul>${lines.map((line) => `<li>${inline(line.slice(2))}</li>`).join("")}</ul>`;
      }
      return `<p>${inline(block)}</p>`;
    })
    .join("\n");
}

const anchor = (kind: string, name: string): string => `${kind}-${name.replace(/[^A-Za-z0-9_-]/g, "-")}`;

function schemaLabel(schema: JsonObject | undefined): string {
  if (schema === undefined) return "";
  if (typeof schema.$ref === "string") {
    const name = schema.$ref.split("/").pop() ?? schema.$ref;
    return `<a href="#${anchor("schema", name)}">${esc(name)}</a>`;
  }
  if (Array.isArray(schema.oneOf)) return (schema.oneOf as JsonObject[]).map(schemaLabel).join(" | ");
  if (Array.isArray(schema.allOf)) return (schema.allOf as JsonObject[]).map(schemaLabel).join(" & ");
  const parts: string[] = [];
  if (schema.type !== undefined) parts.push(Array.isArray(schema.type) ? schema.type.join(" | ") : String(schema.type));
  if (Array.isArray(schema.enum)) parts.push(`one of ${schema.enum.map((v) => JSON.stringify(v)).join(", ")}`);
  if (typeof schema.format === "string") parts.push(schema.format);
  if (typeof schema.pattern === "string") parts.push(`pattern ${schema.pattern}`);
  if (typeof schema.minimum === "number") parts.push(`≥ ${schema.minimum}`);
  return esc(parts.join(", "));
}

const pretty = (value: JsonValue): string => esc(JSON.stringify(value, null, 2));

function httpMessage(start: string, headers: Readonly<Record<string, string>>, body: string | undefined): string {
  const head = [start, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)].join("\n");
  return `<pre class="http">${esc(head)}${body === undefined ? "" : `\n\n${body}`}</pre>`;
}

function renderRetry(example: RetryExample): string {
  const first = example.steps[0]?.request.body;
  const steps = example.steps.map((step, index) => {
    const { request, response } = step;
    const sameBody = index > 0 && JSON.stringify(request.body) === JSON.stringify(first);
    const requestBody =
      request.body === undefined ? undefined : sameBody ? esc("(the same body as in step 1)") : pretty(request.body);
    return `<li><h4>${esc(step.title)}</h4><p>${inline(step.explanation)}</p><div class="exchange">
${httpMessage(`${request.method} ${request.path} HTTP/1.1`, request.headers, requestBody)}
${httpMessage(`HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? ""}`, response.headers, pretty(response.body))}
</div></li>`;
  });
  return `<p>${inline(example.summary)}</p><ol class="steps">${steps.join("\n")}</ol>`;
}

/** A media type's examples; @fastify/swagger writes a lone schema example as `example`. */
function mediaExamples(media: MediaTypeObject): Record<string, ExampleObject> {
  if (media.examples !== undefined) return { ...media.examples };
  return media.example === undefined ? {} : { example: { value: media.example } };
}

function renderParameters(doc: OpenApiDocument, list: readonly OrRef<ParameterObject>[] | undefined): string {
  if (list === undefined || list.length === 0) return "";
  const rows = list.map((item) => {
    const p = deref(doc, item);
    return `<tr><td><code>${esc(p.name)}</code></td><td>${p.in}</td><td>${p.required ? "yes" : "no"}</td><td>${schemaLabel(p.schema)}</td><td>${inline(p.description ?? "")}</td></tr>`;
  });
  return `<h4>Parameters</h4><table><thead><tr><th>name</th><th>in</th><th>required</th><th>schema</th><th></th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

/** Header names, linked to the Headers section; a description only where the response narrows it. */
function renderHeaders(doc: OpenApiDocument, headers: ResponseObject["headers"]): string {
  if (headers === undefined) return "";
  return Object.entries(headers)
    .filter(([name]) => name !== "X-Correlation-ID")
    .map(([name, header]) => {
      const general = deref<HeaderObject>(doc, header).description;
      const own =
        header.description !== undefined && header.description !== general ? `: ${inline(header.description)}` : "";
      return `<div><a href="#${anchor("header", name)}"><code>${esc(name)}</code></a>${own}</div>`;
    })
    .join("");
}

function renderResponses(doc: OpenApiDocument, operation: OperationObject, common: ReadonlySet<string>): string {
  const rows = Object.entries(operation.responses).map(([status, response]) => {
    const listed = problemsOf(doc, response);
    const content = Object.entries(response.content ?? {})
      .map(
        ([type, media]) =>
          `<code>${esc(type)}</code> ${type === PROBLEM_MEDIA_TYPE ? schemaLabel({ $ref: "#/components/schemas/Problem" }) : schemaLabel(media.schema)}`,
      )
      .join("<br>");
    const when =
      listed.length === 0
        ? inline(response.description)
        : `${esc(STATUS_CODES[Number(status)] ?? "")}<ul class="problems">${listed
            .map(
              (p) =>
                `<li${common.has(p.code) ? ' class="common"' : ""}><a href="#${anchor("problem", p.code)}"><code>${esc(p.type)}</code></a> ${esc(p.title)} <small>${esc(p.code)}${p.retryable ? ", retryable" : ""}</small></li>`,
            )
            .join("")}</ul>`;
    return `<tr><td class="status s${status.charAt(0)}">${esc(status)}</td><td>${when}</td><td>${content}</td><td class="headers">${renderHeaders(doc, response.headers)}</td></tr>`;
  });
  return `<h4>Answers</h4><p class="note">Every answer carries <a href="#header-X-Correlation-ID"><code>X-Correlation-ID</code></a>; problem types in grey can come from any route.</p><table class="answers"><thead><tr><th>status</th><th>when</th><th>body</th><th>headers</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

function renderOperation(doc: OpenApiDocument, op: ListedOperation, common: ReadonlySet<string>): string {
  const { operation } = op;
  const security =
    operation.security.length === 0
      ? "none"
      : operation.security
          .flatMap((requirement) => Object.keys(requirement).map((name) => `<a href="#security">${esc(name)}</a>`))
          .join(", ");
  const body = operation.requestBody;
  const requestBody =
    body === undefined
      ? ""
      : `<h4>Request body</h4><p>${inline(body.description ?? "")}</p>${Object.entries(body.content)
          .map(
            ([type, media]) =>
              `<p><code>${esc(type)}</code> ${schemaLabel(media.schema)}</p>${Object.entries(mediaExamples(media))
                .map(
                  ([name, ex]) =>
                    `<details><summary>Example: ${esc(ex.summary ?? name)}</summary><pre>${pretty(ex.value)}</pre></details>`,
                )
                .join("")}`,
          )
          .join("")}`;
  const retry =
    operation["x-retry-example"] === undefined
      ? ""
      : `<p><a href="#retry">The worked retry example</a> follows this route.</p>`;
  return `<article id="${anchor("op", operation.operationId)}">
<h3><span class="method ${op.method}">${op.method.toUpperCase()}</span> <code>${esc(op.path)}</code></h3>
<p class="summary">${esc(operation.summary)} <small>(${esc(operation.operationId)}; auth: ${security})</small></p>
${markdown(operation.description)}
${retry}
${renderParameters(doc, operation.parameters)}
${requestBody}
${renderResponses(doc, operation, common)}
</article>`;
}

/**
 * The whole document as one HTML page: no script, no external asset, so it
 * works on a closed network and under `default-src 'none'`.
 */
export function renderDocsHtml(doc: OpenApiDocument): string {
  const operations = operationsOf(doc);
  const codesByOperation = operations.map(
    (op) => new Set(Object.values(op.operation.responses).flatMap((r) => problemsOf(doc, r).map((p) => p.code))),
  );
  const common = new Set([...(codesByOperation[0] ?? [])].filter((code) => codesByOperation.every((s) => s.has(code))));

  const problemRows = new Map<string, { problem: ListedProblem; operations: ListedOperation[] }>();
  operations.forEach((op) => {
    for (const response of Object.values(op.operation.responses)) {
      for (const problem of problemsOf(doc, response)) {
        const row = problemRows.get(problem.code) ?? { problem, operations: [] };
        row.operations.push(op);
        problemRows.set(problem.code, row);
      }
    }
  });
  const problemTable = [...problemRows.values()]
    .sort((a, b) => a.problem.status - b.problem.status || a.problem.type.localeCompare(b.problem.type))
    .map(({ problem, operations: ops }) => {
      const where = common.has(problem.code)
        ? "any route"
        : ops
            .map(
              (op) =>
                `<a href="#${anchor("op", op.operation.operationId)}">${op.method.toUpperCase()} ${esc(op.path)}</a>`,
            )
            .join("<br>");
      return `<tr id="${anchor("problem", problem.code)}"><td><code>${esc(problem.type)}</code></td><td>${problem.status}</td><td><code>${esc(problem.code)}</code></td><td>${esc(problem.title)}</td><td>${problem.retryable ? "yes" : "no"}</td><td>${where}</td></tr>`;
    })
    .join("");

  const tags = doc.tags.map((tag) => {
    const ops = operations.filter((op) => op.operation.tags.includes(tag.name));
    return { tag, ops };
  });
  const toc = tags
    .map(
      ({ tag, ops }) =>
        `<li>${esc(tag.name)}<ul>${ops
          .map(
            (op) =>
              `<li><a href="#${anchor("op", op.operation.operationId)}"><span class="method ${op.method}">${op.method.toUpperCase()}</span> ${esc(op.path)}</a></li>`,
          )
          .join("")}</ul></li>`,
    )
    .join("");

  const headerRows = Object.entries(doc.components.headers)
    .map(
      ([name, header]) =>
        `<tr id="${anchor("header", name)}"><td><code>${esc(name)}</code></td><td>${inline(header.description)}</td><td>${schemaLabel(header.schema)}</td></tr>`,
    )
    .join("");
  // Request headers are declared per route; the page lists each once.
  const requestHeaders = new Map<string, ParameterObject>();
  for (const { operation } of operations) {
    for (const item of operation.parameters ?? []) {
      const p = deref(doc, item);
      if (p.in === "header" && !requestHeaders.has(p.name.toLowerCase())) requestHeaders.set(p.name.toLowerCase(), p);
    }
  }
  const requestHeaderRows = [...requestHeaders.values()]
    .map(
      (p) =>
        `<tr><td><code>${esc(p.name)}</code></td><td>${inline(p.description ?? "")}</td><td>${schemaLabel(p.schema)}</td></tr>`,
    )
    .join("");
  const security = Object.entries(doc.components.securitySchemes)
    .map(
      ([name, scheme]) =>
        `<dt><code>${esc(name)}</code> (${scheme.type} ${scheme.scheme})</dt><dd>${inline(scheme.description)}</dd>`,
    )
    .join("");
  const retryOp = operations.find((op) => op.operation["x-retry-example"] !== undefined);
  const retry = retryOp?.operation["x-retry-example"];
  const schemas = Object.entries(doc.components.schemas)
    .map(
      ([name, schema]) =>
        `<details id="${anchor("schema", name)}"><summary><code>${esc(name)}</code>${typeof schema.description === "string" ? ` ${inline(schema.description)}` : ""}</summary><pre>${pretty(schema)}</pre></details>`,
    )
    .join("\n");

  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(doc.info.title)} ${esc(doc.info.version)}: HTTP API</title>
<style>${CSS}</style>
</head>
<body>
<nav><h2>Contents</h2><ul>
<li><a href="#overview">Overview</a></li><li><a href="#security">Authentication</a></li><li><a href="#headers">Headers</a></li>
<li><a href="#retry">A retry, worked through</a></li>${toc}
<li><a href="#problems">Problem types</a></li><li><a href="#schemas">Schemas</a></li></ul>
<p><a href="openapi.json">openapi.json</a> (OpenAPI ${esc(doc.openapi)})</p></nav>
<main>
<header id="overview"><h1>${esc(doc.info.title)} <small>${esc(doc.info.version)}</small></h1>
${doc.info.summary === undefined ? "" : `<p class="summary">${esc(doc.info.summary)}</p>`}
${markdown(doc.info.description)}</header>
<section id="security"><h2>Authentication</h2><dl>${security}</dl></section>
<section id="headers"><h2>Headers</h2>
<h3>Request</h3><table><thead><tr><th>header</th><th></th><th>schema</th></tr></thead><tbody>${requestHeaderRows}</tbody></table>
<h3>Answer</h3><table><thead><tr><th>header</th><th></th><th>schema</th></tr></thead><tbody>${headerRows}</tbody></table></section>
<section id="retry"><h2>A retry, worked through</h2>${retry === undefined ? "" : renderRetry(retry)}</section>
${tags
  .filter(({ ops }) => ops.length > 0)
  .map(
    ({ tag, ops }) =>
      `<section id="${anchor("tag", tag.name)}"><h2>${esc(tag.name)}</h2>${markdown(tag.description)}${ops.map((op) => renderOperation(doc, op, common)).join("\n")}</section>`,
  )
  .join("\n")}
<section id="problems"><h2>Problem types</h2>
<p>Every error is <code>application/problem+json</code> (RFC 9457). Types shown in grey can come from any route.</p>
<table><thead><tr><th>type</th><th>status</th><th>code</th><th>title</th><th>retry?</th><th>sent by</th></tr></thead><tbody>${problemTable}</tbody></table></section>
<section id="schemas"><h2>Schemas</h2>${schemas}</section>
</main>
</body>
</html>
`;
}

const CSS = `
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1f24;display:flex}
nav{position:sticky;top:0;align-self:flex-start;height:100vh;overflow:auto;width:20rem;flex:none;padding:1rem;box-sizing:border-box;background:#f4f6f8;border-right:1px solid #d8dee4;font-size:13px}
nav ul{list-style:none;padding-left:.8rem;margin:.2rem 0}
main{padding:1rem 2rem 4rem;max-width:78rem;min-width:0}
a{color:#0b5cad;text-decoration:none}a:hover{text-decoration:underline}
h1 small,.summary small{color:#57606a;font-weight:normal}
h2{border-bottom:2px solid #d8dee4;padding-bottom:.2rem;margin-top:2.5rem}
article{border:1px solid #d8dee4;border-radius:6px;padding:0 1rem 1rem;margin:1.2rem 0}
code,pre{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:#f6f8fa;border:1px solid #d8dee4;border-radius:4px;padding:.6rem;overflow:auto;max-height:32rem}
table{border-collapse:collapse;width:100%;margin:.5rem 0}
th,td{border:1px solid #d8dee4;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f4f6f8}
.method{display:inline-block;min-width:3.2rem;text-align:center;border-radius:3px;color:#fff;font-size:12px;font-weight:bold;padding:0 .3rem}
.method.get{background:#1f7a3d}.method.post{background:#0b5cad}
.status{font-weight:bold;white-space:nowrap}.s2{color:#1f7a3d}.s4{color:#9a6700}.s5{color:#b42318}
ul.problems{margin:.3rem 0;padding-left:1.2rem}
li.common,li.common a{color:#8c959f}
td.headers div{margin-bottom:.3rem}
.exchange{display:grid;grid-template-columns:1fr 1fr;gap:.6rem}
.steps>li{margin-bottom:1.2rem}
.note{color:#57606a;font-size:13px}
details{margin:.3rem 0}summary{cursor:pointer}
@media (max-width:900px){body{display:block}nav{position:static;height:auto;width:auto}.exchange{grid-template-columns:1fr}}
`;
