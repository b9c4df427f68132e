/**
 * Every text the widget writes itself, by locale (docs/contract/clients-v3.md, attribute
 * `locale`: `en`, the default, or `de`). Texts from the API (headings, names, messages) are shown
 * as they come.
 */
const en = {
  boards: "Boards",
  features: "Features",
  changelog: "Changelog",
  suggest: "Suggest a feature",
  search: "Search",
  sort: "Sort",
  tag: "Tag",
  allTags: "All tags",
  more: "Show more",
  loading: "Loading…",
  loadingMore: "Loading more…",
  empty: "Nothing here yet.",
  votes: (n: number) => (n === 1 ? "1 vote" : `${n} votes`),
  comments: (n: number) => (n === 1 ? "1 comment" : `${n} comments`),
  vote: "Vote",
  voteFor: (heading: string) => `Vote for ${heading}`,
  voted: (n: number | null) => (n === null ? "Vote recorded" : `Vote recorded, ${n === 1 ? "1 vote" : `${n} votes`}`),
  unvoted: (n: number | null) => (n === null ? "Vote withdrawn" : `Vote withdrawn, ${n === 1 ? "1 vote" : `${n} votes`}`),
  back: "Back to the list",
  status: "Status",
  response: "Response",
  denied: "Declined",
  shippedIn: "Shipped in",
  commentsTitle: "Comments",
  noComments: "No comments yet.",
  comment: "Comment",
  writeComment: "Write a comment",
  send: "Send",
  reply: "Reply",
  writeReply: "Write a reply",
  cancel: "Cancel",
  delete: "Delete",
  like: "Like",
  likes: (n: number) => (n === 1 ? "1 like" : `${n} likes`),
  team: "Team",
  heading: "Title",
  description: "Description",
  submit: "Submit",
  similar: "Is it one of these?",
  awaitingReview: "Thank you: your suggestion awaits review.",
  pending: "Awaiting review",
  notifications: "Notifications",
  unread: (n: number) => (n === 1 ? "1 unread" : `${n} unread`),
  markAllRead: "Mark all read",
  noNotifications: "No notifications.",
  notification: (type: string) =>
    ({
      status_changed: "Status changed",
      responded: "The team responded",
      shipped: "Shipped",
      merged: "Merged into another feature",
      replied: "New reply to your comment",
      team_commented: "The team commented",
    })[type] ?? "Update",
  featured: "Featured",
  secretKey: "This page uses a secret key: the board is not shown. Use the project's embed key (fb_ek_…).",
  missing: "The element needs the attributes project and key.",
  networkError: "The board could not be reached.",
  sorts: {
    top: "Top",
    votes: "Most votes",
    trending: "Trending",
    new: "Newest",
    oldest: "Oldest",
    comments: "Most comments",
    board: "Board order",
  },
};

export type Texts = typeof en;

const de: Texts = {
  boards: "Boards",
  features: "Funktionen",
  changelog: "Änderungen",
  suggest: "Funktion vorschlagen",
  search: "Suchen",
  sort: "Sortierung",
  tag: "Schlagwort",
  allTags: "Alle Schlagwörter",
  more: "Mehr anzeigen",
  loading: "Wird geladen…",
  loadingMore: "Weitere werden geladen…",
  empty: "Noch nichts hier.",
  votes: (n) => (n === 1 ? "1 Stimme" : `${n} Stimmen`),
  comments: (n) => (n === 1 ? "1 Kommentar" : `${n} Kommentare`),
  vote: "Abstimmen",
  voteFor: (heading) => `Für ${heading} stimmen`,
  voted: (n) => (n === null ? "Stimme gezählt" : `Stimme gezählt, ${n === 1 ? "1 Stimme" : `${n} Stimmen`}`),
  unvoted: (n) => (n === null ? "Stimme zurückgezogen" : `Stimme zurückgezogen, ${n === 1 ? "1 Stimme" : `${n} Stimmen`}`),
  back: "Zurück zur Liste",
  status: "Status",
  response: "Antwort",
  denied: "Abgelehnt",
  shippedIn: "Ausgeliefert in",
  commentsTitle: "Kommentare",
  noComments: "Noch keine Kommentare.",
  comment: "Kommentar",
  writeComment: "Kommentar schreiben",
  send: "Senden",
  reply: "Antworten",
  writeReply: "Antwort schreiben",
  cancel: "Abbrechen",
  delete: "Löschen",
  like: "Gefällt mir",
  likes: (n) => (n === 1 ? "1 Gefällt mir" : `${n} Gefällt mir`),
  team: "Team",
  heading: "Titel",
  description: "Beschreibung",
  submit: "Absenden",
  similar: "Ist es einer dieser Vorschläge?",
  awaitingReview: "Danke: Ihr Vorschlag wird geprüft.",
  pending: "Wird geprüft",
  notifications: "Benachrichtigungen",
  unread: (n) => `${n} ungelesen`,
  markAllRead: "Alle als gelesen markieren",
  noNotifications: "Keine Benachrichtigungen.",
  notification: (type) =>
    ({
      status_changed: "Status geändert",
      responded: "Das Team hat geantwortet",
      shipped: "Ausgeliefert",
      merged: "Mit einer anderen Funktion zusammengeführt",
      replied: "Neue Antwort auf Ihren Kommentar",
      team_commented: "Das Team hat kommentiert",
    })[type] ?? "Neuigkeit",
  featured: "Hervorgehoben",
  secretKey:
    "Diese Seite verwendet einen geheimen Schlüssel: Das Board wird nicht angezeigt. Verwenden Sie den Einbettungsschlüssel (fb_ek_…).",
  missing: "Das Element braucht die Attribute project und key.",
  networkError: "Das Board ist nicht erreichbar.",
  sorts: {
    top: "Beste",
    votes: "Meiste Stimmen",
    trending: "Im Trend",
    new: "Neueste",
    oldest: "Älteste",
    comments: "Meiste Kommentare",
    board: "Board-Reihenfolge",
  },
};

const tables: Record<string, Texts> = { en, de };

/** The texts of `locale` (`en` for anything else). */
export function textsFor(locale: string | null): Texts {
  return tables[locale ?? "en"] ?? en;
}

/** `iso` as a date in `locale`, or "" for null. */
export function formatDate(iso: string | null, locale: string): string {
  if (!iso) return "";
  return new Date(iso).toLocaleDateString(locale === "de" ? "de-DE" : "en-US", { year: "numeric", month: "short", day: "numeric" });
}
