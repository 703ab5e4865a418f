import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/load-config.ts";
import { readTraceContext, validTracestate } from "../../src/observability/trace-context.ts";
import { tracingSettingsOf } from "../../src/observability/tracing.ts";

/** OpenTelemetry's environment variables (the SDK configuration spec), as the README's configuration table lists them. */
describe("tracing settings from the environment", () => {
  it("is off without any OTEL_ variable: tracing is a choice", () => {
    expect(tracingSettingsOf({})).toBeUndefined();
  });

  it("is on with an OTLP endpoint, exporting over OTLP, as service onec-gateway, parent-based always on", () => {
    expect(tracingSettingsOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toEqual({
      exporter: "otlp",
      serviceName: "onec-gateway",
      sampler: { kind: "always_on", parentBased: true, ratio: 1 },
    });
    expect(tracingSettingsOf({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://collector:4318/v1/traces" })).toMatchObject({
      exporter: "otlp",
    });
  });

  it("takes OTEL_TRACES_EXPORTER, OTEL_SERVICE_NAME and the sampler", () => {
    expect(
      tracingSettingsOf({
        OTEL_TRACES_EXPORTER: "console",
        OTEL_SERVICE_NAME: "gateway-eu",
        OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "0.25",
      }),
    ).toEqual({
      exporter: "console",
      serviceName: "gateway-eu",
      sampler: { kind: "traceidratio", parentBased: true, ratio: 0.25 },
    });
  });

  it("is off with OTEL_TRACES_EXPORTER=none or OTEL_SDK_DISABLED=true, whatever else is set", () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" };
    expect(tracingSettingsOf({ ...endpoint, OTEL_TRACES_EXPORTER: "none" })).toBeUndefined();
    expect(tracingSettingsOf({ ...endpoint, OTEL_SDK_DISABLED: "true" })).toBeUndefined();
  });

  it("refuses an exporter or sampler it does not have, at start", () => {
    expect(() => tracingSettingsOf({ OTEL_TRACES_EXPORTER: "zipkin" })).toThrow(ConfigError);
    expect(() => tracingSettingsOf({ OTEL_TRACES_EXPORTER: "otlp", OTEL_TRACES_SAMPLER: "sometimes" })).toThrow(
      ConfigError,
    );
    expect(() =>
      tracingSettingsOf({
        OTEL_TRACES_EXPORTER: "otlp",
        OTEL_TRACES_SAMPLER: "traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "2",
      }),
    ).toThrow(ConfigError);
  });
});

/** The W3C Trace Context Recommendation's tracestate rules (§3.3). */
describe("tracestate", () => {
  it("keeps a list of valid members, multi-tenant keys too, leaving out empty members and spaces around them", () => {
    expect(validTracestate("rojo=00f067aa0ba902b7, congo=t61rcWkgMzE")).toBe("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");
    expect(validTracestate("fw529a3039@dt=abc,,")).toBe("fw529a3039@dt=abc");
  });

  it.each([
    ["an uppercase key", "Rojo=1"],
    ["a key repeated", "rojo=1,rojo=2"],
    ["a value with a character outside printable ASCII", "rojo=é"],
    ["an = in a value", "rojo=a=b"],
    ["a key longer than 256 characters", `${"k".repeat(257)}=v`],
    ["no value", "rojo="],
    ["33 members", Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(",")],
  ])("drops the whole header for %s", (_case, header) => {
    expect(validTracestate(header)).toBeUndefined();
  });

  it("means nothing without a valid traceparent", () => {
    expect(readTraceContext({ tracestate: "rojo=1" })).toBeUndefined();
  });
});
