import { connect } from "node:net";

/**
 * The bench's own few words with the library peer's Redis, in RESP over a
 * plain socket: whether it answers (PING) and, at the end, removing the keys
 * the run left under its prefix. The peer itself talks to Redis through the
 * library's adapter; the bench needs no client of its own for two commands.
 */

const REPLY_LIMIT_MS = 5_000;

export const DEFAULT_BENCH_REDIS_URL = "redis://127.0.0.1:6379";

/** Sends one command and resolves with the reply's first line (`+PONG`, `:42`); rejects on an error reply. */
export function redisCommand(redisUrl: string, args: readonly string[]): Promise<string> {
  const { hostname, port } = new URL(redisUrl);
  const request = `*${args.length}\r\n${args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join("")}`;
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname || "127.0.0.1", port: Number(port || "6379") });
    let reply = "";
    const done = (error: Error | undefined, line?: string) => {
      socket.destroy();
      if (error) reject(error);
      else resolve(line ?? "");
    };
    socket.setTimeout(REPLY_LIMIT_MS, () => done(new Error(`no reply within ${REPLY_LIMIT_MS} ms`)));
    socket.on("error", (error) => done(error));
    socket.on("connect", () => socket.write(request));
    socket.on("data", (chunk) => {
      reply += chunk.toString("utf8");
      const end = reply.indexOf("\r\n");
      if (end === -1) return;
      const line = reply.slice(0, end);
      if (line.startsWith("-")) done(new Error(line.slice(1)));
      else done(undefined, line);
    });
  });
}

/** Undefined when Redis answers PING, else why not. */
export async function redisUnreachable(redisUrl: string): Promise<string | undefined> {
  try {
    const line = await redisCommand(redisUrl, ["PING"]);
    return line === "+PONG" ? undefined : `PING answered ${line}`;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** Deletes every key under `prefix` (one Lua script, so one round trip); resolves with how many. */
export async function deleteKeys(redisUrl: string, prefix: string): Promise<number> {
  if (!/^[A-Za-z0-9._:-]+$/.test(prefix)) throw new Error(`refusing to delete keys under "${prefix}"`);
  const script =
    "local n = 0 for _, key in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('UNLINK', key) n = n + 1 end return n";
  const line = await redisCommand(redisUrl, ["EVAL", script, "0", `${prefix}:*`]);
  return Number(line.slice(1));
}
