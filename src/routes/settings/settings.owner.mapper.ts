/** Row to SettingsObject (owner-api-v3.md, "Objects"): secrets are reported as set or not, never sent. */
import type { SettingsRow } from "./settings.owner.repository.ts";
import type { SettingsObject } from "./settings.owner.schemas.ts";

export function toSettings(row: SettingsRow): SettingsObject {
  return {
    name: row.name,
    description: row.description,
    logo_url: row.logo_url,
    banner_url: row.banner_url,
    currency_symbol: row.currency_symbol,
    show_branding: row.show_branding,
    is_private: row.is_private,
    sso_secret_set: row.sso_secret !== null,
    stripe_webhook_secret_set: row.stripe_webhook_secret !== null,
    paddle_webhook_secret_set: row.paddle_webhook_secret !== null,
    allowed_origins: row.allowed_origins,
    settings: row.settings,
    theme: row.theme,
    notifications: {
      ...row.notification_settings,
      from_name: row.notification_settings.from_name ?? row.name,
      changelog_url: row.notification_settings.changelog_url ?? null,
    },
  };
}
