import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll } from "vitest";

/** Debian's chromium, headless, with nothing of its own going to the network. */
export const CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

/** One real headless Chromium for the file's tests, closed after them. */
export function chromiumForFile(): () => Browser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", args: CHROMIUM_ARGS });
  });
  afterAll(async () => {
    await browser?.close();
  });
  return () => {
    if (!browser) throw new Error("chromium is not running (beforeAll failed?)");
    return browser;
  };
}
