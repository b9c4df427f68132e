/**
 * The widget's CSS (docs/contract/clients-v3.md, "Quality bar", Isolation): it lives in the
 * shadow root, so page CSS does not reach it and it does not leak. Colours, font and radius are
 * the custom properties `--fb-accent`, `--fb-background`, `--fb-text`, `--fb-border`,
 * `--fb-radius`, `--fb-font` (plus `--fb-card` and `--fb-text-secondary`), set on `:host` from the
 * BoardDocument's theme by `themeRule`; a `:host` rule loses to the page's own rules on the
 * element, so a page may override each of them.
 */
import type { ThemeColors } from "./types.ts";

export const BASE_CSS = `
:host{display:block;color:var(--fb-text);background:var(--fb-background);font-family:var(--fb-font),system-ui,-apple-system,"Segoe UI",sans-serif;font-size:16px;line-height:1.45;border:1px solid var(--fb-border);border-radius:var(--fb-radius);padding:16px;box-sizing:border-box;text-align:left}
:host([hidden]){display:none}
*,*::before,*::after{box-sizing:border-box}
h2,h3,h4,p,ul,ol{margin:0}
ul,ol{padding:0;list-style:none}
button,input,select,textarea{font:inherit;color:inherit}
button{cursor:pointer;background:var(--fb-card);border:1px solid var(--fb-border);border-radius:var(--fb-radius);padding:6px 12px}
button:hover{border-color:var(--fb-text-secondary)}
button[disabled],button[aria-disabled=true]{cursor:default;opacity:.7}
:focus-visible{outline:3px solid var(--fb-accent);outline-offset:2px}
input,select,textarea{background:var(--fb-background);border:1px solid var(--fb-text-secondary);border-radius:var(--fb-radius);padding:6px 10px;width:100%}
textarea{min-height:5em;resize:vertical}
label{display:block;font-size:.875em;color:var(--fb-text-secondary);margin-bottom:4px}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.top{display:flex;align-items:center;gap:12px;flex-wrap:wrap;margin-bottom:12px}
.top h2{font-size:1.25em;flex:1}
.muted{color:var(--fb-text-secondary)}
.nav{display:flex;gap:8px;flex-wrap:wrap}
.nav button[aria-current=page],.primary{background:var(--fb-accent);color:var(--fb-on-accent);border-color:var(--fb-accent)}
[role=tablist]{display:flex;gap:4px;border-bottom:1px solid var(--fb-border);margin-bottom:12px;flex-wrap:wrap}
[role=tab]{border:0;border-bottom:3px solid transparent;border-radius:0;background:none;padding:6px 10px}
[role=tab][aria-selected=true]{border-bottom-color:var(--fb-accent);font-weight:600}
.filters{display:grid;grid-template-columns:2fr 1fr 1fr;gap:8px;margin-bottom:12px}
@media (max-width:560px){.filters{grid-template-columns:1fr}}
.list>li{display:flex;gap:12px;align-items:flex-start;background:var(--fb-card);border:1px solid var(--fb-border);border-radius:var(--fb-radius);padding:10px 12px;margin-bottom:8px}
.vote{display:flex;flex-direction:column;align-items:center;min-width:3.5em;padding:4px 8px;line-height:1.2}
.vote[aria-pressed=true]{background:var(--fb-accent);color:var(--fb-on-accent);border-color:var(--fb-accent)}
.vote .arrow{font-size:.75em}
.body{flex:1;min-width:0}
.title{background:none;border:0;padding:0;text-align:left;font-weight:600;text-decoration:underline;text-decoration-color:var(--fb-border);text-underline-offset:3px;overflow-wrap:anywhere}
.meta{display:flex;flex-wrap:wrap;gap:6px 12px;font-size:.875em;color:var(--fb-text-secondary);margin-top:4px;align-items:center}
.dot{display:inline-block;width:.6em;height:.6em;border-radius:50%;margin-right:4px;border:1px solid var(--fb-border)}
.tag{border:1px solid var(--fb-border);border-radius:999px;padding:0 8px}
.error{border:1px solid var(--fb-text-secondary);border-left:4px solid #dc2626;padding:8px 10px;border-radius:var(--fb-radius);margin:8px 0}
.notice{border-left:4px solid var(--fb-accent);padding:8px 10px;background:var(--fb-card);border-radius:var(--fb-radius);margin:8px 0}
.more{display:block;margin:8px auto 0}
.feature h3{font-size:1.2em;overflow-wrap:anywhere}
.text{white-space:pre-wrap;overflow-wrap:anywhere;margin:8px 0}
.response{background:var(--fb-card);border:1px solid var(--fb-border);border-radius:var(--fb-radius);padding:8px 10px;margin:8px 0}
.comments>li{border-top:1px solid var(--fb-border);padding:8px 0}
.comments .replies{margin:8px 0 0 20px}
.comments .replies>li{border-left:2px solid var(--fb-border);padding:4px 0 4px 10px;margin-top:6px}
.actions{display:flex;gap:8px;margin-top:6px;flex-wrap:wrap;align-items:center}
.actions button{padding:2px 10px;font-size:.875em}
button[aria-pressed=true]{background:var(--fb-accent);color:var(--fb-on-accent);border-color:var(--fb-accent)}
form{display:grid;gap:10px;margin:8px 0}
.form-row{display:flex;gap:8px}
.release{border-top:1px solid var(--fb-border);padding:12px 0}
.release h3{font-size:1.1em}
.release .html{overflow-wrap:anywhere}
.release .html a{color:inherit}
.release .html pre{overflow:auto;background:var(--fb-card);padding:8px;border-radius:var(--fb-radius)}
.release .html ul{list-style:disc;padding-left:20px}
.bell{position:relative}
.bell-icon{vertical-align:-3px}
.badge{display:inline-block;min-width:1.4em;padding:0 4px;margin-left:4px;border-radius:999px;background:var(--fb-accent);color:var(--fb-on-accent);font-size:.75em;text-align:center}
.panel{background:var(--fb-card);border:1px solid var(--fb-border);border-radius:var(--fb-radius);padding:10px;margin-bottom:12px}
.panel li{padding:4px 0;border-bottom:1px solid var(--fb-border)}
.panel li.unread{font-weight:600}
`;

const DEFAULTS: Record<"light" | "dark", ThemeColors> = {
  light: {
    accent: "#2563eb",
    background: "#ffffff",
    border: "#e5e7eb",
    card_background: "#f9fafb",
    text: "#111827",
    text_secondary: "#4b5563",
  },
  dark: {
    accent: "#60a5fa",
    background: "#111827",
    border: "#374151",
    card_background: "#1f2937",
    text: "#f9fafb",
    text_secondary: "#d1d5db",
  },
};

/** Relative luminance (WCAG 2) of a #rgb or #rrggbb colour; null for anything else. */
function luminance(color: string): number | null {
  const hex = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(color.trim())?.[1];
  if (!hex) return null;
  const full = hex.length === 3 ? [...hex].map((c) => c + c).join("") : hex;
  const [r, g, b] = [0, 2, 4].map((i) => {
    const v = Number.parseInt(full.slice(i, i + 2), 16) / 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** Black or white, whichever contrasts more with `background` (text on the accent colour). */
export function textOn(background: string): string {
  const l = luminance(background);
  if (l === null) return "#000000";
  return (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? "#000000" : "#ffffff";
}

/**
 * Writes the custom properties of `palette` (from the BoardDocument's theme, defaults where a
 * value is missing) onto the `:host` rule `style`. Values go through the CSSOM, so a theme value
 * cannot end the rule and add selectors of its own.
 */
export function applyTheme(
  style: CSSStyleDeclaration,
  palette: "light" | "dark",
  theme: { light?: Partial<ThemeColors>; dark?: Partial<ThemeColors>; font?: string; radius?: string } | undefined,
): void {
  const colors = { ...DEFAULTS[palette], ...(theme?.[palette] ?? {}) };
  style.setProperty("--fb-accent", colors.accent);
  style.setProperty("--fb-on-accent", textOn(colors.accent));
  style.setProperty("--fb-background", colors.background);
  style.setProperty("--fb-card", colors.card_background);
  style.setProperty("--fb-text", colors.text);
  style.setProperty("--fb-text-secondary", colors.text_secondary);
  style.setProperty("--fb-border", colors.border);
  style.setProperty("--fb-radius", theme?.radius || "8px");
  style.setProperty("--fb-font", theme?.font || "system-ui");
  style.setProperty("color-scheme", palette);
}
