import type { SpanExporter } from "@opentelemetry/sdk-trace";
import { ConfigError } from "../config/load-config.ts";
import { parentIdOf, sampledIn, type TraceContext, traceIdOf } from "./trace-context.ts";

/**
 * Spans exported with the OpenTelemetry SDK over OTLP, when the environment
 * asks for it in OpenTelemetry's own terms (README, configuration). Off by
 * default, and then free: no OpenTelemetry module is even loaded (every one
 * is imported dynamically, below), and the accept path only reads the
 * trace headers (trace-context.ts), which it does either way to pass them on.
 *
 * Three spans, each parented explicitly by a TraceContext that travels as
 * data (no context manager, no async hooks): the request (server), the
 * register's reserve (internal), and each delivery attempt's calls to 1C
 * (client), whose parent is the context stored with the event, so that an
 * attempt made later, by another process, continues the request's trace.
 */
export interface Tracing {
  /** A span child of `parent`, or the root of a new trace without one. */
  startSpan(name: string, kind: SpanRole, parent: TraceContext | undefined, attributes?: SpanAttributes): TracedSpan;
  /** Exports what is still queued, then stops; never rejects. */
  shutdown(): Promise<void>;
}

export type SpanRole = "server" | "internal" | "client";
export type SpanAttributes = Record<string, string | number | boolean | undefined>;

export interface TracedSpan {
  /** What continues this span: its own id as the parent, the parent's tracestate passed on. */
  readonly context: TraceContext;
  setAttributes(attributes: SpanAttributes): void;
  /** Ends the span; with `error`, its status is ERROR and the message says why. */
  end(error?: string): void;
}

/** What the environment asked for: where spans go. */
export interface TracingSettings {
  exporter: "otlp" | "console";
  serviceName: string;
  sampler: SamplerSetting;
}

type SamplerSetting = {
  kind: "always_on" | "always_off" | "traceidratio";
  parentBased: boolean;
  ratio: number;
};

type Env = Readonly<Record<string, string | undefined>>;

const SERVICE_NAME = "onec-gateway";

/**
 * Tracing is on when OTEL_TRACES_EXPORTER names an exporter, or when an OTLP
 * endpoint is set without it (OpenTelemetry's default exporter is otlp; ours
 * is none, so that tracing is a choice). OTEL_SDK_DISABLED=true or
 * OTEL_TRACES_EXPORTER=none turns it off whatever else is set.
 */
export function tracingSettingsOf(env: Env): TracingSettings | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return undefined;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? "")
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== "");
  const endpoint = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) ?? nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (exporters.includes("none") || (exporters.length === 0 && endpoint === undefined)) return undefined;
  const exporter = exporters[0] ?? "otlp";
  if ((exporter !== "otlp" && exporter !== "console") || exporters.length > 1) {
    throw new ConfigError(
      `OTEL_TRACES_EXPORTER=${env.OTEL_TRACES_EXPORTER}: the gateway exports traces to one of otlp, console or none`,
    );
  }
  return { exporter, serviceName: nonEmpty(env.OTEL_SERVICE_NAME) ?? SERVICE_NAME, sampler: samplerOf(env) };
}

/** OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG; OpenTelemetry's default, parentbased_always_on, without them. */
function samplerOf(env: Env): SamplerSetting {
  const name = nonEmpty(env.OTEL_TRACES_SAMPLER)?.toLowerCase() ?? "parentbased_always_on";
  const parentBased = name.startsWith("parentbased_");
  const kind = parentBased ? name.slice("parentbased_".length) : name;
  if (kind !== "always_on" && kind !== "always_off" && kind !== "traceidratio") {
    throw new ConfigError(
      `OTEL_TRACES_SAMPLER=${name}: use always_on, always_off, traceidratio, or one of them after parentbased_`,
    );
  }
  const arg = nonEmpty(env.OTEL_TRACES_SAMPLER_ARG);
  const ratio = arg === undefined ? 1 : Number(arg);
  if (kind === "traceidratio" && !(ratio >= 0 && ratio <= 1)) {
    throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG=${arg}: a ratio from 0 to 1`);
  }
  return { kind, parentBased, ratio };
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === "" ? undefined : trimmed;
}

let installed: Tracing | undefined;

/** This process's tracing, or undefined when it is off: the one thing the request, reserve and attempt paths ask. */
export function activeTracing(): Tracing | undefined {
  return installed;
}

/** Makes `tracing` this process's (a test's in-memory one; undefined turns it off again). */
export function installTracing(tracing: Tracing | undefined): void {
  installed = tracing;
}

/**
 * At start (the server and `gateway worker`): loads the SDK and installs
 * tracing if the environment asks for it; otherwise returns undefined and
 * loads nothing.
 */
export async function startTracing(env: Env): Promise<Tracing | undefined> {
  const settings = tracingSettingsOf(env);
  if (settings === undefined) return undefined;
  const tracing = await createTracing(settings);
  installTracing(tracing);
  return tracing;
}

/**
 * The SDK with our three kinds of span. Spans are batched to the exporter
 * (the OTLP exporter reads its endpoint, headers, timeout and compression
 * from OTEL_EXPORTER_OTLP_*); a test's `exporter` gets each span as it ends.
 */
export async function createTracing(
  settings: Pick<TracingSettings, "serviceName" | "sampler"> & Partial<TracingSettings>,
  exporter?: SpanExporter,
): Promise<Tracing> {
  const [api, sdk, resources] = await Promise.all([
    import("@opentelemetry/api"),
    import("@opentelemetry/sdk-trace"),
    import("@opentelemetry/resources"),
  ]);
  const processor =
    exporter !== undefined
      ? new sdk.SimpleSpanProcessor({ exporter })
      : new sdk.BatchSpanProcessor({ exporter: await exporterFor(settings.exporter ?? "otlp", sdk) });
  const resource = resources
    .resourceFromAttributes({ "service.name": settings.serviceName })
    // OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME win over our default, as OpenTelemetry's SDKs do it.
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const provider = new sdk.TracerProvider({
    resource,
    sampler: samplerFor(settings.sampler, sdk),
    spanProcessors: [processor],
  });
  const tracer = provider.getTracer(SERVICE_NAME);
  const kinds = { server: api.SpanKind.SERVER, internal: api.SpanKind.INTERNAL, client: api.SpanKind.CLIENT };

  const parentOf = (parent: TraceContext | undefined) => {
    if (parent === undefined) return api.ROOT_CONTEXT;
    return api.trace.setSpanContext(api.ROOT_CONTEXT, {
      traceId: traceIdOf(parent),
      spanId: parentIdOf(parent),
      traceFlags: sampledIn(parent) ? api.TraceFlags.SAMPLED : api.TraceFlags.NONE,
      isRemote: true,
      ...(parent.tracestate === undefined ? {} : { traceState: api.createTraceState(parent.tracestate) }),
    });
  };

  return {
    startSpan(name, kind, parent, attributes) {
      const span = tracer.startSpan(name, { kind: kinds[kind], attributes: defined(attributes) }, parentOf(parent));
      const { traceId, spanId, traceFlags } = span.spanContext();
      const traceparent = `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, "0")}`;
      const context =
        parent?.tracestate === undefined ? { traceparent } : { traceparent, tracestate: parent.tracestate };
      return {
        context,
        setAttributes: (more) => span.setAttributes(defined(more)),
        end(error) {
          if (error !== undefined) span.setStatus({ code: api.SpanStatusCode.ERROR, message: error });
          span.end();
        },
      };
    },
    // A collector that is gone loses the last spans; it must not turn the process's stop into a failure.
    shutdown: () => provider.shutdown().catch(() => undefined),
  };
}

async function exporterFor(
  kind: TracingSettings["exporter"],
  sdk: typeof import("@opentelemetry/sdk-trace"),
): Promise<SpanExporter> {
  if (kind === "console") return new sdk.ConsoleSpanExporter();
  const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-proto");
  return new OTLPTraceExporter();
}

function samplerFor(setting: SamplerSetting, sdk: typeof import("@opentelemetry/sdk-trace")) {
  const root =
    setting.kind === "always_on"
      ? new sdk.AlwaysOnSampler()
      : setting.kind === "always_off"
        ? new sdk.AlwaysOffSampler()
        : new sdk.TraceIdRatioBasedSampler(setting.ratio);
  return setting.parentBased ? new sdk.ParentBasedSampler({ root }) : root;
}

/** OpenTelemetry's attributes take no undefined: an unknown value is left out. */
function defined(attributes: SpanAttributes | undefined): Record<string, string | number | boolean> {
  const kept: Record<string, string | number | boolean> = {};
  if (attributes === undefined) return kept;
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) kept[key] = value;
  return kept;
}
