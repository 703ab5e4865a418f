import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { configError } from "../support/config-errors.ts";
import { tempDir } from "../support/temp.ts";

/**
 * docs/security.md: "No configuration error shows any part of a secret".
 * JSON.parse's message quotes the text around a syntax error, and
 * SOURCES_FILE holds the platforms' secrets in clear: a typo beside one
 * must be reported by its place in the file, never by the file's text.
 */

const base = { ONEC_URL: "http://1c.test/base/hs/integration" };
const dir = tempDir("gateway-json-files-");
afterAll(() => dir.remove());

let files = 0;
function file(content: string): string {
  const path = join(dir.path, `config-${++files}.json`);
  writeFileSync(path, content, { mode: 0o600 });
  return path;
}

/** Every run of 6 characters of `text` (as config-secret-files.test.ts judges a leak). */
function expectNoPartOf(text: string, message: string): void {
  for (let at = 0; at + 6 <= text.length; at++) {
    expect(message, `"${text.slice(at, at + 6)}" of the file`).not.toContain(text.slice(at, at + 6));
  }
}

const SECRET = "wc-secret-Jx7Qp2Lm9Vb4";

describe("a JSON file with a syntax error is reported by line and column, never by its text", () => {
  it("SOURCES_FILE: a missing quote right before a secret", () => {
    const text = `{"sources": [\n  {"sender": "shop-w", "platform": "woocommerce",\n   "secrets":[${SECRET}"]}\n]}\n`;
    const path = file(text);
    const error = configError({ ...base, SOURCES_FILE: path });
    expectNoPartOf(SECRET, error.message);
    // The secret's first character, where the string's opening quote was expected.
    expect(error.message).toBe(`SOURCES_FILE ${path} cannot be read as JSON: a syntax error at line 3, column 15`);
  });

  it("SOURCES_FILE: a missing comma after a secret, and a file cut short", () => {
    const cases: Array<[string, string]> = [
      [`{"sources": [{"secrets": ["${SECRET}" "${SECRET}"]}]}`, "line 1, column 52"],
      [`{"sources": [{"secrets": ["${SECRET}`, "line 1, column 50"],
    ];
    for (const [text, place] of cases) {
      const path = file(text);
      const error = configError({ ...base, SOURCES_FILE: path });
      expectNoPartOf(SECRET, error.message);
      expect(error.message).toBe(`SOURCES_FILE ${path} cannot be read as JSON: a syntax error at ${place}`);
    }
  });

  it("SENDERS_FILE and OPERATORS_FILE the same way", () => {
    const name = "vera-beside-the-typo";
    for (const [variable, key] of [
      ["SENDERS_FILE", "senders"],
      ["OPERATORS_FILE", "operators"],
    ] as const) {
      const path = file(`{"${key}": [\n  {"id": ${name}"}\n]}`);
      const error = configError({ ...base, [variable]: path });
      expectNoPartOf(name, error.message);
      expect(error.message).toBe(`${variable} ${path} cannot be read as JSON: a syntax error at line 2, column 10`);
    }
  });
});
