import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dependencyFile } from "../../src/util/package-files.ts";
import { appForDocuments } from "../support/app-for-documents.ts";

/**
 * Issue 22, "What to build" 3: "the API reference from a well-kept UI package
 * (Scalar or Swagger UI) instead of the hand-written renderer". GET /docs is
 * Swagger UI (@fastify/swagger-ui), self-hosted: its page and every file it
 * loads come from the gateway, under a Content-Security-Policy of 'self' (CSP
 * Level 3, w3.org/TR/CSP3: a source list of 'self', hashes and, for images,
 * data:), and it reads the one document at /openapi.json.
 * test/browser/docs.test.ts opens it in Chromium.
 */

/** A Content-Security-Policy header as directive → its sources (CSP3 §2.2: `;`-separated, then whitespace). */
function parsePolicy(header: string): Map<string, string[]> {
  const directives = header
    .split(";")
    .map((part) => part.trim().split(/\s+/))
    .filter(([name]) => name !== undefined && name !== "");
  return new Map(directives.map(([name = "", ...sources]) => [name.toLowerCase(), sources]));
}

const HASH_SOURCE = /^'sha(256|384|512)-[A-Za-z0-9+/]+=*'$/;

/** Attribute values of the tags that load something: script src, link href. */
function loadedBy(html: string): { scripts: string[]; links: string[] } {
  const attr = (tag: string, name: string) => new RegExp(`\\b${name}="([^"]*)"`, "i").exec(tag)?.[1];
  return {
    scripts: [...html.matchAll(/<script\b[^>]*>/gi)].map((m) => attr(m[0], "src") ?? ""),
    links: [...html.matchAll(/<link\b[^>]*>/gi)].map((m) => attr(m[0], "href") ?? ""),
  };
}

/** Absolute URLs, with a scheme or protocol-relative (`//host/…`), in some text. */
const absoluteUrls = (text: string): string[] =>
  [...text.matchAll(/(?:\b[a-z][a-z0-9+.-]*:)?\/\/[^\s"'`<>()]+/gi)]
    .map((m) => m[0])
    .filter((url) => !url.startsWith("data:"));

/** A script without its whole-line `//` comments: a comment cites, it fetches nothing. */
const withoutLineComments = (script: string): string => script.replace(/^\s*\/\/.*$/gm, "");

let app: FastifyInstance;
let page: { status: number; headers: Record<string, unknown>; body: string };

beforeAll(async () => {
  app = appForDocuments();
  await app.ready();
  const answer = await app.inject({ url: "/docs" });
  page = { status: answer.statusCode, headers: answer.headers, body: answer.body };
});
afterAll(async () => {
  await app.close();
});

describe("GET /docs", () => {
  it("answers 200 HTML under a policy that allows only 'self' (and the hash of Swagger UI's one inline style)", () => {
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.headers["x-content-type-options"]).toBe("nosniff");
    const policy = parsePolicy(String(page.headers["content-security-policy"]));
    expect(policy.get("default-src")).toEqual(["'none'"]);
    expect(policy.get("script-src")).toEqual(["'self'"]);
    expect(policy.get("base-uri")).toEqual(["'none'"]);
    expect(policy.get("frame-ancestors")).toEqual(["'none'"]);
    for (const [directive, sources] of policy) {
      for (const source of sources) {
        const allowed =
          source === "'self'" ||
          source === "'none'" ||
          (directive === "style-src" && HASH_SOURCE.test(source)) ||
          // Swagger UI's stylesheet draws its icons as data: images; an image runs no script.
          (directive === "img-src" && source === "data:");
        expect(allowed, `${directive} ${source}`).toBe(true);
      }
    }
  });

  it("has no inline script or style: it loads its scripts and stylesheets from the gateway, each 200", async () => {
    const html = page.body;
    const { scripts, links } = loadedBy(html);
    expect(scripts.length).toBeGreaterThanOrEqual(3);
    for (const tag of html.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/gi)) expect(tag[1]?.trim()).toBe("");
    expect(html).not.toMatch(/<style\b|\sstyle=|\son[a-z]+=/i);
    for (const path of [...scripts, ...links]) {
      expect(path, "a path on the gateway").toMatch(/^\/[^/]/);
      const asset = await app.inject({ url: path });
      expect(asset.statusCode, path).toBe(200);
    }
    const types = await Promise.all(
      [...scripts, ...links.filter((href) => href.endsWith(".css"))].map(
        async (path) => (await app.inject({ url: path })).headers["content-type"],
      ),
    );
    expect(new Set(types)).toEqual(new Set(["application/javascript; charset=utf-8", "text/css; charset=utf-8"]));
  });

  it("serves Swagger UI's own files, byte for byte, from the package", async () => {
    for (const file of ["swagger-ui-bundle.js", "swagger-ui-standalone-preset.js", "swagger-ui.css"]) {
      const answer = await app.inject({ url: `/docs/static/${file}` });
      expect(answer.statusCode, file).toBe(200);
      expect(
        answer.rawPayload.equals(readFileSync(dependencyFile("@fastify/swagger-ui", `static/${file}`))),
        file,
      ).toBe(true);
    }
    const missing = await app.inject({ url: "/docs/static/not-there.js" });
    expect(missing.statusCode).toBe(404);
    expect(missing.headers["content-type"]).toBe("application/problem+json; charset=utf-8");
  });

  it("reads the document from /openapi.json: its loader names it, and it is there", async () => {
    const loaderPath = loadedBy(page.body).scripts.find((src) => src.endsWith("/swagger-initializer.js"));
    expect(loaderPath).toBeDefined();
    const loader = await app.inject({ url: loaderPath ?? "" });
    expect(loader.body).toContain('"urls":[{"url":"/openapi.json"');
    const document = await app.inject({ url: "/openapi.json" });
    expect(document.statusCode).toBe(200);
    expect(document.json()).toEqual(JSON.parse(JSON.stringify(app.swagger())));
  });

  it("names no other host: no absolute URL in the page or in its loader", async () => {
    expect(absoluteUrls(page.body)).toEqual([]);
    const loader = await app.inject({ url: "/docs/static/swagger-initializer.js" });
    expect(absoluteUrls(withoutLineComments(loader.body))).toEqual([]);
    // No validator elsewhere (Swagger UI's default is validator.swagger.io).
    expect(loader.body).toContain("validatorUrl: null");
  });

  it("allows by hash exactly the inline styles Swagger UI writes (found in the installed package)", () => {
    const styleSrc = parsePolicy(String(page.headers["content-security-policy"])).get("style-src") ?? [];
    const inlineStyles = ["swagger-ui-standalone-preset.js", "swagger-ui-bundle.js"].flatMap((file) =>
      [
        ...readFileSync(dependencyFile("@fastify/swagger-ui", `static/${file}`), "utf8").matchAll(
          /createElement\("style",null,("(?:[^"\\]|\\.)*")\)/g,
        ),
      ].map((m) => JSON.parse(m[1] ?? '""') as string),
    );
    expect(inlineStyles.length).toBeGreaterThanOrEqual(1);
    const hashes = inlineStyles.map((css) => `'sha256-${createHash("sha256").update(css).digest("base64")}'`);
    expect(styleSrc.filter((source) => HASH_SOURCE.test(source)).sort()).toEqual([...new Set(hashes)].sort());
  });
});
