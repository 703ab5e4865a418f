import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { headingAnchors, isExternal, linksOf, slug } from "./markdown-links.ts";

/**
 * Issue 22: "The README becomes a newcomer's manual, and stays under 400
 * lines. The rest goes to docs/". Moving text between files must not break
 * a link: every relative link and #anchor in README.md and docs/*.md
 * resolves, anchors as GitHub makes them from headings.
 */
const root = new URL("../../", import.meta.url).pathname;
const manual = [
  "README.md",
  ...readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];

function read(path: string): string {
  return readFileSync(join(root, path), "utf8");
}

/** What is wrong with one link of `from` (a path from the repository's root), or undefined. */
function brokenLink(from: string, target: string): string | undefined {
  if (isExternal(target)) return undefined;
  const [pathPart = "", anchor] = target.split("#", 2);
  const file = pathPart === "" ? join(root, from) : join(root, dirname(from), decodeURIComponent(pathPart));
  const shown = relative(root, file);
  if (!file.startsWith(root)) return `${target}: leaves the repository`;
  if (!existsSync(file)) return `${target}: no file ${shown}`;
  if (anchor === undefined) return undefined;
  if (statSync(file).isDirectory() || !file.endsWith(".md")) return `${target}: an anchor into ${shown}, not Markdown`;
  return headingAnchors(readFileSync(file, "utf8")).has(decodeURIComponent(anchor))
    ? undefined
    : `${target}: no heading of ${shown} has the anchor #${anchor}`;
}

describe("README.md and docs/", () => {
  it("has the five documents the issue names", () => {
    for (const name of ["architecture", "operations", "api", "performance", "security"]) {
      expect(manual, `docs/${name}.md`).toContain(`docs/${name}.md`);
    }
  });

  it("keeps README.md under 400 lines", () => {
    const text = read("README.md");
    const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
    expect(lines).toBeLessThan(400);
  });

  it.each(manual)("%s: every relative link and anchor resolves", (path) => {
    const links = linksOf(read(path));
    const broken = links.flatMap(({ target, line }) => {
      const problem = brokenLink(path, target);
      return problem === undefined ? [] : [`${path}:${line}: ${problem}`];
    });
    expect(broken).toEqual([]);
  });

  it("links README.md to every document in docs/", () => {
    const targets = new Set(linksOf(read("README.md")).map(({ target }) => target.split("#")[0]));
    for (const path of manual.filter((p) => p !== "README.md")) expect(targets, path).toContain(path);
  });
});

describe("the link check itself", () => {
  it("makes GitHub's anchors: code spans and links keep their text, punctuation goes, spaces become -", () => {
    expect(slug("What happens when…")).toBe("what-happens-when");
    expect(slug("`GET /integration/v1/orders/paid/{event_id}`: the status URL")).toBe(
      "get-integrationv1orderspaidevent_id-the-status-url",
    );
    expect(slug("compose.yaml")).toBe("composeyaml");
    expect(slug("Shops' senders")).toBe("shops-senders");
    expect(slug("A — b")).toBe("a--b");
    expect(slug("Безопасный режим")).toBe("безопасный-режим");
    expect(slug("See [the API](api.md)")).toBe("see-the-api");
  });

  it("numbers a repeated heading's anchor and ignores headings inside code blocks", () => {
    const anchors = headingAnchors("# A\n## Notes\n```sh\n# not a heading\n```\n## Notes\n");
    expect([...anchors]).toEqual(["a", "notes", "notes-1"]);
  });

  it("finds links and images in prose only, with their line", () => {
    const text = '[a](x.md#y) and ![b](img.png "t")\n`[c](not-a-link.md)`\n```\n[d](nor-this.md)\n```\n';
    expect(linksOf(text)).toEqual([
      { target: "x.md#y", line: 1 },
      { target: "img.png", line: 1 },
    ]);
  });

  it("would catch a missing file, a missing anchor and an anchor into a file that is not Markdown", () => {
    expect(brokenLink("README.md", "docs/no-such-file.md")).toMatch(/no file docs\/no-such-file\.md/);
    expect(brokenLink("README.md", "docs/api.md#no-such-heading")).toMatch(/no heading/);
    expect(brokenLink("README.md", "#no-such-heading")).toMatch(/no heading of README\.md/);
    expect(brokenLink("README.md", "package.json#x")).toMatch(/not Markdown/);
    expect(brokenLink("docs/api.md", "../README.md#the-answer-map")).toBeUndefined();
    expect(brokenLink("README.md", "https://example.com/#anything")).toBeUndefined();
  });
});
