import type { IncomingMessage } from "node:http";

export type BodyResult = { kind: "ok"; bytes: Buffer } | { kind: "too_large" };

/**
 * Buffers the body up to `limit` bytes. Stops at the first byte past it rather
 * than reading a huge body only to refuse it. Rejects if the client goes away mid-body.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<BodyResult> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve({ kind: "too_large" });
  // Once destroyed (the client left while we waited) no event will ever fire again.
  if (req.destroyed) return Promise.reject(new Error("client closed the connection before the body was read"));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.pause();
        resolve({ kind: "too_large" });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve({ kind: "ok", bytes: Buffer.concat(chunks, size) });
    };
    const onError = (error: Error): void => {
      cleanup();
      reject(error);
    };
    const onClose = (): void => {
      cleanup();
      reject(new Error("client closed the connection before the body ended"));
    };
    const cleanup = (): void => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("close", onClose);
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("close", onClose);
  });
}

export type JsonResult = { ok: true; value: unknown } | { ok: false; message: string };

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Senders on Windows stacks (1C among them) like to prefix a BOM; the decoder drops it, JSON.parse would not. */
export function decodeJson(bytes: Uint8Array): JsonResult {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { ok: false, message: "body is not valid UTF-8" };
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, message: `body is not valid JSON: ${(error as Error).message}` };
  }
}
