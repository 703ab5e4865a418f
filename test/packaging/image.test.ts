import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseDockerfile } from "./dockerfile.ts";
import { imageProblems, readCompose, rehearse } from "./rehearse.ts";

const repoRoot = new URL("../../", import.meta.url).pathname;
const dockerfileText = readFileSync(`${repoRoot}Dockerfile`, "utf8");
const startScript = (JSON.parse(readFileSync(`${repoRoot}package.json`, "utf8")) as { scripts: { start: string } })
  .scripts.start;

describe("the Dockerfile, as written", () => {
  it("says what the image must: multi-stage Node slim, numeric non-root USER, exec-form CMD = npm start, /readyz, SIGTERM, the drain within the grace periods", () => {
    expect(imageProblems(parseDockerfile(dockerfileText), readCompose(), startScript)).toEqual([]);
  });

  it.each([
    ["USER 1000:1000", "USER root", /USER must be numeric/],
    ["USER 1000:1000", "USER 0:0", /USER is root/],
    ["STOPSIGNAL SIGTERM", "STOPSIGNAL SIGKILL", /STOPSIGNAL/],
    ["/readyz')", "/healthz')", /HEALTHCHECK/],
    ["ENV SHUTDOWN_DELAY_MS=5000", "ENV SHUTDOWN_DELAY_MS=25000", /Kubernetes/],
    ['CMD ["node", "--max', 'CMD npm start # ["node", "--max', /CMD is not in exec form/],
    ["ENV DATABASE_URL=/app/data/gateway.db", "ENV DATABASE_URL=/app/gateway.db", /not on a VOLUME/],
  ])("refuses a copy with %s changed to %s", (from, to, problem) => {
    expect(dockerfileText).toContain(from);
    const broken = parseDockerfile(dockerfileText.replace(from, to));
    expect(imageProblems(broken, readCompose(), startScript).join("\n")).toMatch(problem);
  });
});

// The Dockerfile's steps in a clean folder (see rehearse.ts): `npm ci` from the machine's npm cache
// (better-sqlite3 13 brings its binary, nothing is compiled), the build, the prune, and two starts.
describe("the Dockerfile, rehearsed", () => {
  it("builds in a clean folder, runs as its USER with the register on its volume, is healthy, drains on STOPSIGNAL and loses nothing", async () => {
    if (process.getuid?.() !== 0)
      throw new Error("the rehearsal runs as root: RUN chowns the volume, the CMD runs as USER");
    const { timings, log } = await rehearse();
    console.log(`Dockerfile rehearsal:\n  ${log.join("\n  ")}`);
    expect(timings.drain).toBeGreaterThanOrEqual(5000);
  }, 600_000);
});
