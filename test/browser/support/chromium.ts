/**
 * Debian's chromium for the browser tests (docs/testing.md): its path (CHROMIUM_PATH, default
 * /usr/bin/chromium, which .ci/run installs), whether it is there, and a launch with the flags
 * this machine needs (headless, no sandbox as root, no background traffic off loopback).
 */
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/**
 * Whether chromium is installed for the browser test `name`. Without it the test is skipped
 * locally with a message; under CI=true this throws, so that CI never passes without running it.
 */
export function chromiumAvailable(name: string): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.CI === "true") throw new Error(`${CHROMIUM} is missing: CI must run the ${name} (.ci/run installs chromium)`);
  console.warn(`skipping the ${name}: ${CHROMIUM} is not installed (apt-get install chromium)`);
  return false;
}

/** Launches headless chromium; close the Browser it resolves to in afterAll. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
