import { readFileSync } from "node:fs";

/**
 * The servers' resident memory during a measured load, read from
 * /proc/<pid>/status (VmRSS) every SAMPLE_MS. Reading a small proc file takes
 * microseconds, so the load generator sharing this process barely notices;
 * where there is no /proc (not Linux) the peak is simply unknown.
 */

const SAMPLE_MS = 200;

export interface RssSampler {
  /** Stops sampling; the highest VmRSS any one of the processes had, in bytes, or undefined if none was read. */
  stop(): number | undefined;
}

export function sampleRss(pids: readonly (number | undefined)[]): RssSampler {
  let peak: number | undefined;
  const sample = () => {
    for (const pid of pids) {
      const rss = pid === undefined ? undefined : residentBytes(pid);
      if (rss !== undefined && (peak === undefined || rss > peak)) peak = rss;
    }
  };
  sample();
  const timer = setInterval(sample, SAMPLE_MS);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}

/** VmRSS, which the kernel reports in kB. */
function residentBytes(pid: number): number | undefined {
  try {
    const kilobytes = readFileSync(`/proc/${pid}/status`, "utf8").match(/^VmRSS:\s+(\d+)\s+kB$/m)?.[1];
    return kilobytes === undefined ? undefined : Number(kilobytes) * 1024;
  } catch {
    return undefined; // exited, or no /proc
  }
}

export function megabytes(bytes: number | undefined): string {
  return bytes === undefined ? "n/a" : (bytes / 2 ** 20).toFixed(0);
}
