import { describe, expect, it } from "vitest";
import { checkJsonBodyHeaders, parseMediaType } from "../../src/http/media-type.ts";

describe("parseMediaType (RFC 9110 §8.3.1)", () => {
  it.each([
    ["application/json", { type: "application", subtype: "json", parameters: [] }],
    ["Application/JSON ", { type: "application", subtype: "json", parameters: [] }],
    ["application/json;charset=UTF-8", { type: "application", subtype: "json", parameters: [["charset", "UTF-8"]] }],
    [
      'application/vnd.a+json ; Charset="utf-8" ; q="a\\"b;c"',
      {
        type: "application",
        subtype: "vnd.a+json",
        parameters: [
          ["charset", "utf-8"],
          ["q", 'a"b;c'],
        ],
      },
    ],
    ["text/plain; charset=utf-8", { type: "text", subtype: "plain", parameters: [["charset", "utf-8"]] }],
    // RFC 9110 allows an empty parameter: `*( OWS ";" OWS [ parameter ] )`.
    ["application/json; ;charset=utf-8;", { type: "application", subtype: "json", parameters: [["charset", "utf-8"]] }],
  ])("reads %s", (value, expected) => {
    expect(parseMediaType(value)).toEqual(expected);
  });

  it.each(["", "json", "application/", "/json", "application/json; charset", 'a/b; c="x', "a b/c", "a/b; c=d e"])(
    "refuses %j",
    (value) => {
      expect(parseMediaType(value)).toBeUndefined();
    },
  );
});

describe("checkJsonBodyHeaders", () => {
  it.each([
    "application/json",
    "application/json; charset=utf-8",
    "application/json;charset=UTF-8",
    'application/json; charset="utf-8"',
    "application/json; charset=utf8",
    "application/problem+json; charset=utf-8",
    "application/vnd.shop.order+json",
    "application/json; version=2",
  ])("accepts %s", (contentType) => {
    expect(checkJsonBodyHeaders(contentType, undefined)).toEqual({ ok: true });
    expect(checkJsonBodyHeaders(contentType, "identity")).toEqual({ ok: true });
    expect(checkJsonBodyHeaders(contentType, " Identity ")).toEqual({ ok: true });
    // An empty list is no coding at all (RFC 9110 §5.6.1: `#element` may be empty).
    expect(checkJsonBodyHeaders(contentType, "")).toEqual({ ok: true });
  });

  it.each([
    [undefined, "media-type"],
    ["text/plain", "media-type"],
    ["text/plain; charset=utf-8", "media-type"],
    ["application/xml", "media-type"],
    ["application/jsonx", "media-type"],
    ["application/json-seq", "media-type"],
    ["text/json", "media-type"],
    ["application/json; charset", "media-type"],
    ["application/json; charset=iso-8859-1", "charset"],
    ['application/json; charset="UTF-16"', "charset"],
    ["application/json; charset=utf-8; charset=latin1", "charset"],
  ])("refuses Content-Type %s (%s)", (contentType, reason) => {
    const verdict = checkJsonBodyHeaders(contentType, undefined);
    expect(verdict).toMatchObject({ ok: false, reason });
  });

  it("says which charset it got and that JSON is UTF-8", () => {
    const verdict = checkJsonBodyHeaders("application/json; charset=windows-1251", undefined);
    expect(verdict.ok === false && verdict.detail).toMatch(/windows-1251.*UTF-8/);
  });

  it.each(["gzip", "br", "deflate", "identity, gzip", "x-gzip", "compress"])(
    "refuses Content-Encoding %j",
    (coding) => {
      const verdict = checkJsonBodyHeaders("application/json", coding);
      expect(verdict).toMatchObject({ ok: false, reason: "content-coding" });
    },
  );

  it("judges the coding before the media type: a coded body cannot be read at all", () => {
    expect(checkJsonBodyHeaders("text/plain", "gzip")).toMatchObject({ ok: false, reason: "content-coding" });
  });
});
