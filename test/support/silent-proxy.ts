import { createServer, type Server, Socket } from "node:net";
import { listenAsRelay } from "./tcp-proxy.ts";

/**
 * A relay to the server whose traffic can be dropped in silence, as a
 * network partition or a firewall drops it: bytes stop, nothing is closed or
 * reset, so neither end learns of it but by its own timers.
 */
export interface SilentProxy {
  url: string;
  /** A partition: the open connections go dead, and new ones are accepted but never answered. */
  silence(): void;
  /** The network back: new connections work. The silenced ones stay dead (their bytes were dropped). */
  restore(): void;
  /** Only the connections open now go dead (a firewall that forgot them); new ones work. */
  silenceOpen(): void;
  close(): void;
}

export async function silentProxy(target: URL): Promise<SilentProxy> {
  interface Pair {
    sockets: [Socket, Socket];
    dead: boolean;
  }
  const pairs = new Set<Pair>();
  let silent = false;
  const server: Server = createServer((client) => {
    client.on("error", () => {});
    if (silent) return; // accepted, never answered
    const upstream = new Socket();
    upstream.on("error", () => {});
    upstream.connect(Number(target.port || 5432), target.hostname);
    const pair: Pair = { sockets: [client, upstream], dead: false };
    pairs.add(pair);
    client.on("data", (chunk) => pair.dead || upstream.write(chunk));
    upstream.on("data", (chunk) => pair.dead || client.write(chunk));
    // A dead pair's closing is dropped too: the other end must not learn of it.
    client.on("close", () => pair.dead || upstream.destroy());
    upstream.on("close", () => {
      if (!pair.dead) client.destroy();
      pairs.delete(pair);
    });
  });
  const url = await listenAsRelay(server, target);
  const silenceOpen = () => {
    for (const pair of pairs) pair.dead = true;
  };
  return {
    url,
    silence: () => {
      silent = true;
      silenceOpen();
    },
    restore: () => {
      silent = false;
    },
    silenceOpen,
    close: () => {
      for (const pair of pairs) for (const socket of pair.sockets) socket.destroy();
      server.close();
    },
  };
}
