/**
 * The project's settings as the owner reads and writes them (owner-api-v3.md, GET/PATCH
 * /settings, Rule 8). A write takes the project row lock, merges nested objects key by key and
 * stores the result in the caller's transaction; every instance then drops its cached copy
 * (src/middleware/owner-change.ts), so the next public read shows it.
 */
import type { Db } from "../../../db/connect.ts";
import type { ProjectSettings, ProjectTheme } from "../../../db/schema.ts";
import type { SettingsPatchBody } from "./settings.owner.schemas.ts";

function selectSettings(db: Db) {
  return db
    .selectFrom("projects")
    .select([
      "id",
      "name",
      "description",
      "logo_url",
      "banner_url",
      "currency_symbol",
      "show_branding",
      "is_private",
      "sso_secret",
      "stripe_webhook_secret",
      "paddle_webhook_secret",
      "allowed_origins",
      "settings",
      "theme",
    ]);
}

export type SettingsRow = Awaited<ReturnType<ReturnType<typeof selectSettings>["executeTakeFirstOrThrow"]>>;

export async function readSettings(db: Db, projectId: number): Promise<SettingsRow> {
  return selectSettings(db).where("id", "=", projectId).executeTakeFirstOrThrow();
}

/** `theme` with `patch` applied key by key, `light` and `dark` one level deeper. */
function mergeTheme(theme: ProjectTheme, patch: NonNullable<SettingsPatchBody["theme"]>): ProjectTheme {
  const { light, dark, ...top } = patch;
  return { ...theme, ...top, light: { ...theme.light, ...light }, dark: { ...theme.dark, ...dark } };
}

/** Applies `patch` to project `projectId` inside `trx` and returns the stored result. */
export async function updateSettings(trx: Db, projectId: number, patch: SettingsPatchBody, now: Date): Promise<SettingsRow> {
  const current = await selectSettings(trx).where("id", "=", projectId).forNoKeyUpdate().executeTakeFirstOrThrow();
  const { settings, theme, ...fields } = patch;
  const merged: { settings?: ProjectSettings; theme?: ProjectTheme } = {};
  if (settings !== undefined) merged.settings = { ...current.settings, ...settings };
  if (theme !== undefined) merged.theme = mergeTheme(current.theme, theme);
  await trx
    .updateTable("projects")
    .set({ ...fields, ...merged, updated_at: now })
    .where("id", "=", projectId)
    .execute();
  return readSettings(trx, projectId);
}
