/**
 * The README's shell examples as a test runs them (test/resilience/first-start.test.ts): every
 * ```sh block that calls curl, in README order, each run by bash against a demo server, with
 * curl failing on any answer of 400 or more and the block stopping at its first failure.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

export interface ShellBlock {
  /** 1-based line of the block's opening fence in the README. */
  line: number;
  code: string;
}

/** The ```sh blocks of `markdown` that contain a curl command. */
export function curlBlocks(markdown: string): ShellBlock[] {
  const blocks: ShellBlock[] = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== "```sh") continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i]!.trim() !== "```"; i++) body.push(lines[i]!);
    const code = body.join("\n");
    if (/(^|[\s$(])curl\s/m.test(code)) blocks.push({ line: start + 1, code });
  }
  return blocks;
}

/** The curl blocks of the markdown file at `path` (curlBlocks). */
export function readmeCurlBlocks(path: string): ShellBlock[] {
  return curlBlocks(readFileSync(path, "utf8"));
}

// curl stops on an answer >= 400 (printing its body) and the block on its first failing
// command, naming it.
const PRELUDE = `set -e -o pipefail
curl() { command curl --fail-with-body --show-error "$@"; }
trap 'echo "failed: $BASH_COMMAND" >&2' ERR
`;

/** Runs `block` with bash, the README's http://127.0.0.1:8080 replaced by `origin`. */
export function runBlock(block: ShellBlock, origin: string, env: Record<string, string> = {}): { status: number | null; output: string } {
  const code = block.code.replaceAll("http://127.0.0.1:8080", origin);
  const result = spawnSync("bash", ["-c", PRELUDE + code], {
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", ...env },
    timeout: 60_000,
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}
