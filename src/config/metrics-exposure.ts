import { isIP } from "node:net";

/**
 * Who may read /metrics: anyone who reaches it (`open`), only a request with
 * METRICS_TOKEN as its bearer token (`token`), or nobody (`closed`, a 401 that
 * says to set METRICS_TOKEN).
 */
export type MetricsAccess = "open" | "token" | "closed";

/**
 * Where /metrics is served: on the main listener beside the API (`main`), or
 * on a listener of its own (METRICS_PORT), which a reverse proxy in front of
 * the API never forwards to.
 */
export type MetricsListener =
  | { readonly kind: "main" }
  | { readonly kind: "own"; readonly host: string; readonly port: number };

export interface MetricsExposure {
  readonly listener: MetricsListener;
  readonly access: MetricsAccess;
}

export class MetricsExposureError extends Error {
  override readonly name = "MetricsExposureError";
}

export interface MetricsSettings {
  /** HOST: the main listener's address. */
  host: string;
  /** TRUST_PROXY: a proxy in front forwards other machines' requests from its own address. */
  trustProxy: readonly string[];
  /** METRICS_TOKEN. */
  token: string | undefined;
  /** METRICS_PORT: /metrics on a listener of its own (0: any free port). */
  port: number | undefined;
  /** METRICS_HOST: that listener's address, 127.0.0.1 unless set. */
  metricsHost: string | undefined;
}

/** The metrics listener's address unless METRICS_HOST says otherwise: this machine only. */
const DEFAULT_METRICS_HOST = "127.0.0.1";

/**
 * Issue 22, finding 10: /metrics was open to whoever reached the API. The rule:
 * - METRICS_TOKEN set: /metrics asks for it, wherever it is served;
 * - otherwise it is open only where nobody but this machine can reach it: a
 *   listener on a loopback address, and for the main listener only when no
 *   proxy is trusted (a proxy on this machine would carry other machines'
 *   requests to a loopback listener);
 * - the main listener elsewhere without a token: closed, so a deployment that
 *   sets nothing keeps starting and shows nothing;
 * - a listener of its own on a public address without a token: a
 *   configuration error, since nobody asks for a listener only to refuse it.
 * Pure, so the policy is tested without sockets.
 */
export function metricsExposure(settings: MetricsSettings): MetricsExposure {
  if (settings.metricsHost !== undefined && settings.port === undefined) {
    throw new MetricsExposureError("METRICS_HOST is the address of METRICS_PORT's listener: set METRICS_PORT too");
  }
  if (settings.port !== undefined) {
    const host = settings.metricsHost ?? DEFAULT_METRICS_HOST;
    const listener = { kind: "own", host, port: settings.port } as const;
    if (settings.token !== undefined) return { listener, access: "token" };
    if (isLoopback(host)) return { listener, access: "open" };
    throw new MetricsExposureError(
      `METRICS_HOST=${host} serves /metrics beyond this machine: set METRICS_TOKEN (or METRICS_TOKEN_FILE) as well`,
    );
  }
  const listener = { kind: "main" } as const;
  if (settings.token !== undefined) return { listener, access: "token" };
  const onlyThisMachine = isLoopback(settings.host) && settings.trustProxy.length === 0;
  return { listener, access: onlyThisMachine ? "open" : "closed" };
}

/** 127.0.0.0/8, ::1 (and its IPv4-mapped form), or the name localhost. */
export function isLoopback(host: string): boolean {
  const address = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (address === "localhost") return true;
  if (isIP(address) === 4) return address.startsWith("127.");
  if (isIP(address) === 6) return address === "::1" || /^::ffff:127\./.test(address);
  return false;
}
