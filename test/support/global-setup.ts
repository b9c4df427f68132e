/**
 * With DATABASE_URL set, creates a fresh database for this run on that server (never assuming
 * an existing one is empty), migrates it once, hands its URL to the tests, and drops it after.
 */
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import type { TestProject } from "vitest/node";
import { migrateToLatest, openDatabase } from "../../db/connect.ts";

declare module "vitest" {
  export interface ProvidedContext {
    testDatabaseUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) return;
  const name = `fb_test_${randomBytes(5).toString("hex")}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const handle = await openDatabase({ DATABASE_URL: url.toString(), poolSize: 1 });
  await migrateToLatest(handle.db);
  await handle.close();
  project.provide("testDatabaseUrl", url.toString());
  return async () => {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  };
}
