import { describe, expect, it } from "vitest";
import { escapeHtml, Html, html } from "../../src/http/console/html.ts";

describe("the console's html template", () => {
  it("escapes every interpolation: the five characters that end text or a quoted attribute", () => {
    const hostile = `<script>alert('x')</script> & "quoted"`;
    expect(String(html`<p title="${hostile}">${hostile}</p>`)).toBe(
      '<p title="&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;quoted&quot;">&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;quoted&quot;</p>',
    );
  });

  it("passes markup through only when the template itself made it", () => {
    const inner = html`<strong>${"<b>"}</strong>`;
    expect(String(html`<p>${inner}</p>`)).toBe("<p><strong>&lt;b&gt;</strong></p>");
    // Something that merely looks like markup, or claims to be Html, is text.
    const impostor = { toString: () => "<b>bold</b>" } as unknown as string;
    expect(String(html`<p>${impostor}</p>`)).toBe("<p>&lt;b&gt;bold&lt;/b&gt;</p>");
    expect(() => new Html(Symbol("made by html") as never, "<b>")).toThrow(/html template only/);
  });

  it("writes lists in order, numbers as text, and nothing for null, undefined and false", () => {
    expect(String(html`<ul>${["<a>", html`<li>${1}</li>`, 2.5, null, undefined, false, true]}</ul>`)).toBe(
      "<ul>&lt;a&gt;<li>1</li>2.5true</ul>",
    );
    expect(String(html`${[["nested", ["<deep>"]]]}`)).toBe("nested&lt;deep&gt;");
  });

  it("refuses an interpolation in an unquoted attribute value, which escaping cannot protect", () => {
    const value = "x onmouseover=alert(1)";
    expect(() => html`<input value=${value}>`).toThrow(/unquoted attribute/);
    expect(() => html`<input value= ${value}>`).toThrow(/unquoted attribute/);
  });

  it("shows invisible direction and zero-width characters as \\u escapes instead of obeying them", () => {
    expect(escapeHtml("abc\u202Egnp.exe")).toBe("abc\\u202Egnp.exe");
    expect(escapeHtml("\u2066x\u2069\u200B\u200F\uFEFF")).toBe("\\u2066x\\u2069\\u200B\\u200F\\uFEFF");
    // Letters of right-to-left scripts are text like any other.
    expect(escapeHtml("שלום مرحبا")).toBe("שלום مرحبا");
  });
});
