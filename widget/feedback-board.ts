/**
 * The board widget's entry point (docs/contract/clients-v3.md, "The board widget"): defines the
 * custom element `feedback-board` once (a second load of the module is harmless). It renders
 * into an open shadow root, with its stylesheet adopted there, and themes itself from the
 * BoardDocument (`theme` attribute: light, dark or auto, which follows prefers-color-scheme).
 *
 * Attributes: project, key, api, board, view, sort, sso-token, theme, locale (changing one
 * re-renders). Methods: identify(ssoToken | null), refresh(). Events: feedback-board:ready,
 * :vote, :suggest, :comment, :error (CustomEvent, bubbling, composed).
 */
import { h, render } from "preact";
import { isSecretKey } from "./api.ts";
import { App, type AppConfig } from "./app.ts";
import { textsFor } from "./i18n.ts";
import { applyTheme, BASE_CSS } from "./styles.ts";
import type { BoardDocument } from "./types.ts";

const ATTRIBUTES = ["project", "key", "api", "board", "view", "sort", "sso-token", "theme", "locale"] as const;

/** `/api/v3` on the origin this module was loaded from (the `api` attribute's default). */
const DEFAULT_API = new URL("/api/v3", import.meta.url).href;

/** A stylesheet of `css`, or null where constructable stylesheets are missing. */
function sheetOf(css: string): CSSStyleSheet | null {
  try {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(css);
    return sheet;
  } catch {
    return null;
  }
}

class FeedbackBoardElement extends HTMLElement {
  static get observedAttributes(): readonly string[] {
    return ATTRIBUTES;
  }

  private readonly root: ShadowRoot;
  private readonly themeSheet: CSSStyleSheet | null;
  private readonly themeStyle: CSSStyleDeclaration;
  private theme: BoardDocument["theme"] | undefined;
  private tick = 0;
  private scheduled = false;
  private readonly media = typeof matchMedia === "function" ? matchMedia("(prefers-color-scheme: dark)") : null;
  private readonly onScheme = () => this.paint();

  constructor() {
    super();
    this.root = this.attachShadow({ mode: "open" });
    const base = sheetOf(BASE_CSS);
    this.themeSheet = sheetOf(":host{}");
    if (base && this.themeSheet) {
      this.root.adoptedStyleSheets = [base, this.themeSheet];
      this.themeStyle = (this.themeSheet.cssRules[0] as CSSStyleRule).style;
    } else {
      // Without constructable stylesheets: <style> elements (CSP style-src 'unsafe-inline').
      const style = document.createElement("style");
      style.textContent = BASE_CSS;
      const themed = document.createElement("style");
      themed.textContent = ":host{}";
      this.root.append(style, themed);
      this.themeStyle = ((themed.sheet as CSSStyleSheet).cssRules[0] as CSSStyleRule).style;
    }
  }

  connectedCallback(): void {
    this.media?.addEventListener("change", this.onScheme);
    this.paint();
    this.render();
  }

  disconnectedCallback(): void {
    this.media?.removeEventListener("change", this.onScheme);
    render(null, this.root);
  }

  attributeChangedCallback(name: string, before: string | null, after: string | null): void {
    if (before === after || !this.isConnected) return;
    if (name === "theme") this.paint();
    this.schedule();
  }

  /** Sets (a string) or clears (null) the voter's SSO token, sent as X-VF-Token; re-renders. */
  identify(ssoToken: string | null): void {
    if (ssoToken) this.setAttribute("sso-token", ssoToken);
    else this.removeAttribute("sso-token");
  }

  /** Reloads everything shown: the board document and the current view's data. */
  refresh(): void {
    this.tick++;
    this.schedule();
  }

  /** The palette in force: the `theme` attribute, or the system's preference for `auto`. */
  private palette(): "light" | "dark" {
    const asked = this.getAttribute("theme");
    if (asked === "light" || asked === "dark") return asked;
    return this.media?.matches ? "dark" : "light";
  }

  private paint(): void {
    applyTheme(this.themeStyle, this.palette(), this.theme);
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      if (this.isConnected) this.render();
    });
  }

  private render(): void {
    const project = this.getAttribute("project") ?? "";
    const key = this.getAttribute("key") ?? "";
    const t = textsFor(this.getAttribute("locale"));
    // A secret key opens every owner route of the project: refuse it before any request.
    const refusal = isSecretKey(key) ? t.secretKey : !project || !key ? t.missing : null;
    if (refusal) {
      render(h("p", { class: "error", role: "alert" }, refusal), this.root);
      this.dispatchEvent(
        new CustomEvent("feedback-board:error", {
          detail: { code: isSecretKey(key) ? "secret_key_refused" : "missing_attribute", message: refusal, status: 0 },
          bubbles: true,
          composed: true,
        }),
      );
      return;
    }
    const config: AppConfig = {
      project,
      key,
      api: (this.getAttribute("api") || DEFAULT_API).replace(/\/+$/, ""),
      board: this.getAttribute("board"),
      view: this.getAttribute("view"),
      sort: this.getAttribute("sort"),
      ssoToken: this.getAttribute("sso-token"),
      locale: this.getAttribute("locale"),
    };
    this.setAttribute("lang", config.locale === "de" ? "de" : "en");
    render(
      h(App, {
        config,
        host: this,
        tick: this.tick,
        onTheme: (theme: BoardDocument["theme"]) => {
          this.theme = theme;
          this.paint();
        },
      }),
      this.root,
    );
  }
}

if (!customElements.get("feedback-board")) customElements.define("feedback-board", FeedbackBoardElement);

export { FeedbackBoardElement };
