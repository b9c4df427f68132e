/**
 * Debian's chromium, driven by playwright-core, for the browser tests (test/browser) and the
 * bench's widget row (scripts/bench/widget.ts): its path (CHROMIUM_PATH, default
 * /usr/bin/chromium, which .ci/run installs), whether it is there, and a launch with the flags
 * this machine needs (headless, no sandbox as root, no background traffic off loopback).
 */
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Whether the chromium binary is at CHROMIUM. */
export function chromiumInstalled(): boolean {
  return existsSync(CHROMIUM);
}

/** Launches headless chromium; the caller closes the Browser it resolves to. */
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
