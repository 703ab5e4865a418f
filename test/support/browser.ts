import { existsSync, mkdirSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";

/** Debian's Chromium: `apt-get install chromium`. Playwright's own browser downloads cannot work here. */
export const CHROMIUM_PATH = "/usr/bin/chromium";

/** Root needs --no-sandbox; the rest keep Chromium off the network this machine does not have. */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
];

/** Where the browser tests write their screenshots (gitignored). */
export const ARTEFACTS_DIR = new URL("../artefacts/", import.meta.url);

/**
 * Whether the browser tests can run. Without Chromium they are skipped with
 * one line, unless CONSOLE_BROWSER_REQUIRED=1 (CI), where a missing browser
 * is a failure, not a silent skip.
 */
export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM_PATH)) return true;
  if (process.env.CONSOLE_BROWSER_REQUIRED === "1") {
    throw new Error(`CONSOLE_BROWSER_REQUIRED=1 but ${CHROMIUM_PATH} is missing: apt-get install chromium`);
  }
  console.warn(`skipping the browser tests: ${CHROMIUM_PATH} is missing (apt-get install chromium)`);
  return false;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

/** What must never happen on a console page: a violated CSP, a script error, a dialog (alert from injected script). */
export interface PageTrouble {
  cspViolations: string[];
  scriptErrors: string[];
  dialogs: string[];
}

/**
 * Watches a page for trouble. CSP violations are caught twice: Chromium's own
 * console report, and the page's `securitypolicyviolation` event, listened to
 * from an init script (which the page's CSP does not govern).
 */
export async function watchForTrouble(page: Page): Promise<PageTrouble> {
  const trouble: PageTrouble = { cspViolations: [], scriptErrors: [], dialogs: [] };
  // A string: the test code is compiled without the DOM's types, and this runs in the page.
  await page.addInitScript({
    content: `document.addEventListener("securitypolicyviolation", (event) =>
      console.error("securitypolicyviolation: " + event.violatedDirective + " blocked " + event.blockedURI));`,
  });
  page.on("console", (message) => {
    const text = message.text();
    if (/securitypolicyviolation|Content Security Policy/i.test(text)) trouble.cspViolations.push(text);
  });
  page.on("pageerror", (error) => trouble.scriptErrors.push(error.message));
  page.on("dialog", (dialog) => {
    trouble.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    // The page may close first (a test that ends on the dialog): that is no failure of the test's.
    dialog.dismiss().catch(() => {});
  });
  return trouble;
}

/** A screenshot of the whole page into test/artefacts/; returns its path. */
export async function saveScreenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTEFACTS_DIR, { recursive: true });
  const path = new URL(name, ARTEFACTS_DIR).pathname;
  await page.screenshot({ path, fullPage: true });
  return path;
}
