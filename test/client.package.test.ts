/**
 * The client package builds and packs (docs/contract/clients-v3.md, "The TypeScript client":
 * ships ESM with its .d.ts): `npm run client:build` compiles clients/typescript to dist, and
 * `npm pack --dry-run --json` there lists the ESM files and their declarations; the built module
 * loads and exposes the client.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = new URL("..", import.meta.url).pathname;
const packageDir = new URL("../clients/typescript/", import.meta.url).pathname;

describe("@feedback-board/client package", () => {
  it("builds to dist and packs ESM with .d.ts and its README", async () => {
    await run("npm", ["run", "client:build"], { cwd: root });
    const { stdout } = await run("npm", ["pack", "--dry-run", "--json"], { cwd: packageDir });
    const [pack] = JSON.parse(stdout) as { name: string; files: { path: string }[] }[];
    expect(pack!.name).toBe("@feedback-board/client");
    const files = pack!.files.map((file) => file.path);
    for (const file of [
      "dist/index.js",
      "dist/index.d.ts",
      "dist/client.js",
      "dist/client.d.ts",
      "dist/generated/sdk.gen.js",
      "README.md",
      "package.json",
    ]) {
      expect(files).toContain(file);
    }
    expect(files.some((file) => file.startsWith("src/"))).toBe(false);
    const built = await import(new URL("dist/index.js", `file://${packageDir}`).href);
    expect(typeof built.createClient).toBe("function");
    expect(typeof built.verifyWebhook).toBe("function");
    expect(
      new built.FeedbackBoardError("x", { status: 0, code: "network_error", field: null, requestId: null, retryAfter: null }),
    ).toBeInstanceOf(Error);
  }, 600_000);
});
