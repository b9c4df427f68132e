/**
 * The project's settings as the owner reads and writes them (owner-api-v3.md, GET/PATCH
 * /settings, Rule 8). A write takes the project row lock, merges nested objects key by key and
 * stores the result in the caller's transaction; every instance then drops its cached copy
 * (src/middleware/owner-change.ts), so the next public read shows it.
 */
import { type RawBuilder, sql } from "kysely";
import type { Db } from "../../../db/connect.ts";
import type { NotificationSettings, ProjectSettings, ProjectTheme } from "../../../db/schema.ts";
import { FROM_ADDRESS_REQUIRED } from "../../contract/notification-settings.ts";
import { validationError } from "../../lib/http/errors.ts";
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
      "notification_settings",
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

/**
 * `current` with `patch` applied key by key (engagement-api-v3.md, "Settings"). Throws 422
 * naming `notifications.from_address` when the result has email on without a sender address.
 */
function mergeNotifications(current: NotificationSettings, patch: NonNullable<SettingsPatchBody["notifications"]>): NotificationSettings {
  const merged = { ...current, ...patch };
  if (merged.email_enabled && merged.from_address === null) {
    throw validationError("notifications.from_address", `notifications.from_address: ${FROM_ADDRESS_REQUIRED}`);
  }
  return merged;
}

/**
 * Applies `patch` to project `projectId` inside `trx` and returns the stored result. Throws
 * ApiError 422 (nothing written) when the merged notifications break their cross-field rule.
 */
export async function updateSettings(trx: Db, projectId: number, patch: SettingsPatchBody, now: Date): Promise<SettingsRow> {
  const current = await selectSettings(trx).where("id", "=", projectId).forNoKeyUpdate().executeTakeFirstOrThrow();
  const { settings, theme, notifications, ...fields } = patch;
  const merged: { settings?: ProjectSettings; theme?: ProjectTheme; notification_settings?: RawBuilder<string> } = {};
  if (notifications !== undefined) {
    // The object as a jsonb parameter: postgres-js would store a JSON text parameter as a jsonb string.
    merged.notification_settings = sql<string>`${sql.val(mergeNotifications(current.notification_settings, notifications))}::jsonb`;
  }
  if (settings !== undefined) merged.settings = { ...current.settings, ...settings };
  if (theme !== undefined) merged.theme = mergeTheme(current.theme, theme);
  await trx
    .updateTable("projects")
    .set({ ...fields, ...merged, updated_at: now })
    .where("id", "=", projectId)
    .execute();
  return readSettings(trx, projectId);
}
