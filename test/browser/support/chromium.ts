/**
 * Chromium for the browser tests (docs/testing.md): the path and launch of scripts/chromium.ts,
 * which the bench's widget row shares, plus the tests' rule for a missing binary.
 */
import { CHROMIUM, chromiumInstalled, launchChromium } from "../../../scripts/chromium.ts";

export { CHROMIUM, launchChromium };

/**
 * Whether chromium is installed for the browser test `name`. Without it the test is skipped
 * locally with a message; under CI=true this throws, so that CI never passes without running it.
 */
export function chromiumAvailable(name: string): boolean {
  if (chromiumInstalled()) return true;
  if (process.env.CI === "true") throw new Error(`${CHROMIUM} is missing: CI must run the ${name} (.ci/run installs chromium)`);
  console.warn(`skipping the ${name}: ${CHROMIUM} is not installed (apt-get install chromium)`);
  return false;
}
