/**
 * Two documentation examples a new user runs as pasted:
 * - README.md "Signing an SSO token": the block shows the demo project's published SSO secret
 *   (src/admin/demo.ts DEMO_SSO_SECRET), signs a token with it and sends it as X-VF-Token; run
 *   by bash (as test/resilience/support/readme.ts runs blocks) against the app, every answer is 2xx and the
 *   voter the token names exists with the token's email.
 * - docs/email.md's SMTP catcher prints an email's List-Unsubscribe address (mailparser files
 *   it under `list`): the snippet runs on a free port and receives a message sent by nodemailer.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { type ServerType, serve } from "@hono/node-server";
import nodemailer from "nodemailer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_SSO_SECRET } from "../src/admin/demo.ts";
import { curlBlocks } from "./resilience/support/readme.ts";
import { createTestContext, type ImportedProject, type TestContext } from "./support/harness.ts";

const root = new URL("..", import.meta.url).pathname;

let ctx: TestContext;
let server: ServerType;
let origin: string;

beforeAll(async () => {
  ctx = await createTestContext();
  ({ server, origin } = await new Promise<{ server: ServerType; origin: string }>((resolve) => {
    const started = serve({ fetch: ctx.app.fetch, port: 0, hostname: "127.0.0.1" }, (info: AddressInfo) =>
      resolve({ server: started, origin: `http://127.0.0.1:${info.port}` }),
    );
  }));
});
afterAll(async () => {
  server?.close();
  await ctx?.close();
});

describe("README: signing an SSO token", () => {
  it("shows the demo's SSO secret in a block that signs a token and uses it, answered 2xx", async () => {
    const readme = readFileSync(`${root}README.md`, "utf8");
    const [block] = curlBlocks(readme).filter((found) => found.code.includes("X-VF-Token"));
    expect(block, "a runnable ```sh block sending X-VF-Token").toBeDefined();
    expect(block!.code).toContain(DEMO_SSO_SECRET);

    // The demo project's SSO secret on a project of this test (the demo's slug, keys and
    // feature ids are another database's): the block runs with those put in.
    const p: ImportedProject = await ctx.importProject({
      project: { sso_secret: DEMO_SSO_SECRET },
      features: [{ ref: "a", board: "roadmap", column: "c-planned", heading: "Dark mode" }],
    });
    const featureId = p.ids.ids.features.a!;
    const code = block!.code
      .replace(/^KEY=\S+/m, `KEY=${p.secretKey}`)
      .replaceAll("/projects/lumen/", `/projects/${p.slug}/`)
      .replaceAll("/features/1/", `/features/${featureId}/`);
    const result = await runBlockAsync(code, origin);
    expect(result.status, result.output).toBe(0);
    expect(result.output).toContain(`"feature":{"id":${featureId}`);

    const voter = await ctx.db
      .selectFrom("voters")
      .innerJoin("projects", "projects.id", "voters.project_id")
      .select(["voters.kind", "voters.email", "voters.display_name"])
      .where("projects.slug", "=", p.slug)
      .where("voters.kind", "=", "sso")
      .executeTakeFirstOrThrow();
    expect(voter).toEqual({ kind: "sso", email: "ada@example.com", display_name: "Ada Lovelace" });
  });
});

/**
 * Runs a README block with bash as test/resilience/support/readme.ts does (curl failing on an
 * answer of 400 or more, the block stopping at its first failure), but without blocking this
 * process: the app answering the block's requests runs in it.
 */
async function runBlockAsync(code: string, origin: string): Promise<{ status: number | null; output: string }> {
  const prelude = `set -e -o pipefail\ncurl() { command curl --fail-with-body --show-error "$@"; }\n`;
  const child = spawn("bash", ["-c", prelude + code.replaceAll("http://127.0.0.1:8080", origin)], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const timer = setTimeout(() => child.kill(), 60_000);
  const status = await new Promise<number | null>((resolve) => child.on("close", resolve));
  clearTimeout(timer);
  return { status, output };
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

describe("docs/email.md: the SMTP catcher", () => {
  let catcher: ChildProcess | undefined;
  afterAll(() => {
    catcher?.kill();
  });

  it("prints the List-Unsubscribe address of a message it receives", async () => {
    const doc = readFileSync(`${root}docs/email.md`, "utf8");
    const snippet = /node --input-type=module -e '([\s\S]*?)'\n/.exec(doc)?.[1];
    expect(snippet, "the catcher snippet").toBeDefined();
    expect(snippet).toContain(".listen(2525");
    const port = await freePort();
    catcher = spawn(process.execPath, ["--input-type=module", "-e", snippet!.replace(".listen(2525", `.listen(${port}`)], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    catcher.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    catcher.stderr!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });

    const link = "http://127.0.0.1:8080/api/v3/unsubscribe/lumen.v_1.abc";
    const transport = nodemailer.createTransport({ host: "127.0.0.1", port, secure: false, ignoreTLS: true });
    // The catcher needs a moment to listen: retry the send for up to 10 s.
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        await transport.sendMail({
          from: "updates@lumen.test",
          to: "ada@example.com",
          subject: "[Lumen] Dark mode",
          text: "An update",
          headers: { "List-Unsubscribe": `<${link}>`, "List-Unsubscribe-Post": "List-Unsubscribe=One-Click" },
        });
        break;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    transport.close();
    const printed = Date.now() + 10_000;
    while (!output.includes("[Lumen] Dark mode") && Date.now() < printed) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(output).toContain(`${link} [Lumen] Dark mode`);
    expect(output).not.toContain("undefined");
  }, 30_000);
});
