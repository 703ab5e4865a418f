/**
 * The little of Markdown the link check needs: the anchors GitHub gives a
 * file's headings, and the links a file makes, code left out.
 */

/** A link as written: its target, and the line it is on (1-based). */
export interface MarkdownLink {
  target: string;
  line: number;
}

const FENCE = /^\s*(```|~~~)/;

/** The file's lines with fenced code blocks blanked, so that line numbers still count. */
function proseLines(text: string): string[] {
  let fenced = false;
  return text.split("\n").map((line) => {
    if (FENCE.test(line)) {
      fenced = !fenced;
      return "";
    }
    return fenced ? "" : line;
  });
}

/** Code spans hold text, not links: `[a](b)` inside backticks is not one. */
function withoutCodeSpans(line: string): string {
  return line.replace(/(`+)[\s\S]*?\1/g, "");
}

/**
 * A heading's text as GitHub renders it before making the anchor: code spans
 * keep their text, links and images keep their label.
 */
function renderedText(heading: string): string {
  return heading
    .replace(/(`+)([\s\S]*?)\1/g, "$2")
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .trim();
}

/**
 * GitHub's anchor for a heading (github-slugger): lower case, every character
 * that is not a letter, a mark, a digit, `_`, `-` or a space dropped, each
 * space made a `-`. Nothing is collapsed: "a — b" is "a--b".
 */
export function slug(heading: string): string {
  return renderedText(heading)
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** Every anchor of a file's headings; a repeated one gets -1, -2… as on GitHub. */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(text)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Every inline link and image in the file's prose, code blocks and code spans left out. */
export function linksOf(text: string): MarkdownLink[] {
  return proseLines(text).flatMap((line, index) =>
    [...withoutCodeSpans(line).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => ({
      target: match[1] ?? "",
      line: index + 1,
    })),
  );
}

/** Links that leave the repository (a scheme such as https: or mailto:) are not checked here. */
export function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target);
}
