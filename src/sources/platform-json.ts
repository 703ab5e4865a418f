/**
 * A platform's JSON body: UTF-8 (fatal) and JSON.parse, nothing more. The
 * senders' strict parse (repeated keys refused, decimal notation listed) is
 * for events we take as they are; a platform's payload is signed by the
 * platform, read only through its adapter's mapping, and refusing it would
 * only make the platform retry the same bytes until it drops the webhook.
 */
export type PlatformJson = { ok: true; value: unknown } | { ok: false; detail: string };

const utf8 = new TextDecoder("utf-8", { fatal: true });

export function readPlatformJson(raw: Uint8Array): PlatformJson {
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    return { ok: false, detail: "the body is not valid UTF-8; JSON text must be UTF-8 (RFC 8259 §8.1)" };
  }
  if (text.trim() === "") return { ok: false, detail: "the body is empty" };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, detail: `the body is not JSON: ${(error as Error).message}` };
  }
}
