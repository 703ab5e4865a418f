/**
 * The import rules `npm test` enforces (dependency-cruiser): no cycles, and
 * the core never reaches out to the edges. The HTTP edge and the CLI may use
 * everything below them; nothing below may use them.
 */
const CORE = "^src/(domain|errors|register|delivery|onec|accept|operations|views|retention|config|util|observability)/";
const EDGE = "^src/(http|cli)/";

module.exports = {
  forbidden: [
    {
      name: "no-cycles",
      comment: "A cycle makes two modules one: neither can be read, tested or replaced alone.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "core-not-to-edge",
      comment: "Domain, register, delivery, 1C client and use cases know nothing of HTTP or the command line.",
      severity: "error",
      from: { path: CORE },
      to: { path: EDGE },
    },
    {
      name: "domain-not-to-register",
      comment:
        "The register stores the domain's facts (statuses, first answers); the domain knows no storage. The other way round made domain ↔ register a cycle of folders.",
      severity: "error",
      from: { path: "^src/domain/" },
      to: { path: "^src/register/" },
    },
    {
      name: "onec-client-stands-alone",
      comment: "The 1C client speaks the contract only: it does not know the register, delivery or acceptance.",
      severity: "error",
      from: { path: "^src/onec/" },
      to: { path: "^src/(register|delivery|accept|operations)/" },
    },
    {
      name: "cli-not-to-http",
      comment: "The two edges share use cases and views, never each other.",
      severity: "error",
      from: { path: "^src/cli/" },
      to: { path: "^src/http/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
  },
};
