/**
 * The board the element draws (docs/contract/clients-v3.md, "What it shows and does"): the
 * project's name, boards as tabs, the features list with search, sort, tag filter and "more",
 * voting, the feature view with its comments, the suggestion form with similar features, the
 * changelog and the notification bell. Every text from the API is drawn as text; the one
 * exception is a release's `body_html`, the server's sanitized HTML.
 */

import { html } from "htm/preact";
import { createContext, type RefObject, type VNode } from "preact";
import { useContext, useEffect, useMemo, useRef, useState } from "preact/hooks";
import { BoardApi, BoardError } from "./api.ts";
import { formatDate, type Texts, textsFor } from "./i18n.ts";
import type { BoardDocument, Comment, Feature, Meta, Notification, Release, VoteResult } from "./types.ts";

type Node = VNode | VNode[] | string | null;

export interface AppConfig {
  project: string;
  key: string;
  api: string;
  board: string | null;
  view: string | null;
  sort: string | null;
  ssoToken: string | null;
  locale: string | null;
}

type View = { kind: "features" } | { kind: "changelog" } | { kind: "suggest" } | { kind: "feature"; id: number };
/** A view a feature can be opened over. */
type BaseView = Exclude<View, { kind: "feature" }>;

const baseOf = (view: View): BaseView => (view.kind === "feature" ? { kind: "features" } : view);
/** The feature the `view` attribute opens; not focused: the page, not the voter, asked for it. */
const detailOf = (view: View) => (view.kind === "feature" ? { id: view.id, takeFocus: false } : null);

/** The `view` attribute as a view: `features` (default), `changelog`, `feature:{id}`. */
export function parseView(view: string | null): View {
  if (view === "changelog") return { kind: "changelog" };
  const id = /^feature:(\d+)$/.exec(view ?? "")?.[1];
  if (id) return { kind: "feature", id: Number(id) };
  return { kind: "features" };
}

interface Shared {
  api: BoardApi;
  t: Texts;
  locale: string;
  doc: BoardDocument;
  /** Fires `feedback-board:{name}` on the host (bubbling, composed). */
  emit(name: string, detail: unknown): void;
  /** Reports a refusal: the error event; the caller shows the message in place. */
  failed(error: unknown): BoardError;
  /** Says `text` through the polite live region. */
  announce(text: string): void;
  /**
   * Opens feature `id` over the current view; `opener` (the control pressed) gets focus back
   * when the voter goes back (docs/widget.md, "Focus").
   */
  openFeature(id: number, opener: HTMLElement | null): void;
  /** Closes the feature view: the view under it shows again, focus returns to its opener. */
  back(): void;
  /** Tells every list that feature `id` changed in the feature view (a vote, a comment count). */
  featureChanged(id: number, patch: Partial<Feature>): void;
  /** Subscribes to featureChanged; returns the unsubscribe. */
  onFeatureChange(listener: (id: number, patch: Partial<Feature>) => void): () => void;
  /** Changes every time refresh() is called: effects that load data depend on it. */
  tick: number;
  /** Mints-then-shows: the bell appears once the voter has an identity. */
  identityChanged(): void;
}

const SharedContext = createContext<Shared | null>(null);
const useShared = () => useContext(SharedContext)!;

const SORTS = ["top", "votes", "trending", "new", "oldest", "comments", "board"] as const;
const PER_PAGE = 20;
const SEARCH_DEBOUNCE_MS = 250;
const SIMILAR_DEBOUNCE_MS = 300;

/** The query of a features page; the element's prefetch of the first page asks the same. */
function listQuery(board: string, sort: string, q: string, tag: string, page: number) {
  return { board, sort, q, tag: tag ? [tag] : undefined, page, per_page: PER_PAGE };
}

/** `value`, settled for `ms` milliseconds. */
function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

/**
 * Focus to move once this component's next render is in the DOM: `later(find)` focuses what
 * `find` returns then (nothing when it returns null). Call it next to the state change that
 * removes or adds the element concerned.
 */
function useFocusLater(): (find: () => HTMLElement | null | undefined) => void {
  const pending = useRef<(() => HTMLElement | null | undefined) | null>(null);
  useEffect(() => {
    const find = pending.current;
    pending.current = null;
    find?.()?.focus();
  });
  return (find) => {
    pending.current = find;
  };
}

/**
 * "Show more" as WAI-ARIA's feed practice has it: while the next page loads, the button stays in
 * place and focusable (`aria-disabled`, its label saying it loads) instead of vanishing under the
 * voter's focus. `arrived(first, last)`, called with the new page's state changes: when the
 * button had focus, the first new entry (`first()`) takes it after the render; with nothing new,
 * the button keeps it, or, if it is gone (no more pages), the last entry (`last()`) takes it
 * (docs/widget.md, "Accessibility").
 */
function useShowMore() {
  const button = useRef<HTMLButtonElement>(null);
  const focusLater = useFocusLater();
  const arrived = (first: () => HTMLElement | null | undefined, last: () => HTMLElement | null | undefined) => {
    if (!button.current?.matches(":focus")) return;
    focusLater(() => first() ?? (button.current?.isConnected ? null : last()));
  };
  return { button, arrived };
}

function MoreButton({ busy, onMore, button }: { busy: boolean; onMore: () => void; button: RefObject<HTMLButtonElement> }): Node {
  const { t } = useShared();
  return html`<button
    type="button"
    class="more"
    ref=${button}
    aria-disabled=${busy ? "true" : undefined}
    onClick=${() => {
      if (!busy) onMore();
    }}
  >
    ${busy ? t.loadingMore : t.more}
  </button>`;
}

/** The entry after `id` in `list`, else the one before, else null: where focus goes when `id` is removed. */
function neighbour<T extends { id: number }>(list: T[], id: number): T | null {
  const index = list.findIndex((item) => item.id === id);
  return list[index + 1] ?? list[index - 1] ?? null;
}

function ErrorLine({ error }: { error: BoardError | null }): Node {
  return error ? html`<p class="error" role="alert">${error.message}</p>` : null;
}

/** Whether a vote control belongs on `feature`: the project takes votes and its column does. */
function votable(doc: BoardDocument, feature: Feature): boolean {
  if (!doc.capabilities.can_vote) return false;
  const board = doc.boards.find((entry) => entry.slug === feature.board.slug) ?? doc.boards.find((entry) => entry.id === feature.board.id);
  return board?.columns.find((column) => column.id === feature.column.id)?.is_votable ?? false;
}

/**
 * Casts or withdraws the voter's vote on `feature`: the new state is drawn at once through
 * `update` and put back when the API refuses (clients-v3.md, "Voting").
 */
function useVote(feature: Feature, update: (patch: Partial<Feature>) => void) {
  const { api, emit, failed, announce, t, identityChanged } = useShared();
  const [error, setError] = useState<BoardError | null>(null);
  const [busy, setBusy] = useState(false);
  const toggle = async () => {
    if (busy) return;
    const before = { has_voted: feature.has_voted, vote_count: feature.vote_count };
    const delta = before.has_voted ? -1 : 1;
    update({ has_voted: !before.has_voted, vote_count: before.vote_count === null ? null : before.vote_count + delta });
    setBusy(true);
    setError(null);
    const hadIdentity = api.hasIdentity;
    try {
      const result = await api.write<VoteResult>(before.has_voted ? "DELETE" : "POST", api.projectPath(`/features/${feature.id}/vote`));
      update({ has_voted: result.has_voted, vote_count: result.vote_count });
      announce(result.has_voted ? t.voted(result.vote_count) : t.unvoted(result.vote_count));
      emit("vote", { feature_id: feature.id, has_voted: result.has_voted, vote_count: result.vote_count });
    } catch (caught) {
      update(before);
      setError(failed(caught));
    } finally {
      setBusy(false);
      if (!hadIdentity && api.hasIdentity) identityChanged();
    }
  };
  return { toggle, error, busy };
}

function VoteButton({ feature, update }: { feature: Feature; update: (patch: Partial<Feature>) => void }): Node {
  const { t } = useShared();
  const { toggle, error } = useVote(feature, update);
  const count = feature.vote_count;
  return html`<div>
    <button
      type="button"
      class="vote"
      aria-pressed=${feature.has_voted ? "true" : "false"}
      aria-label=${`${t.voteFor(feature.heading)}${count === null ? "" : `, ${t.votes(count)}`}`}
      onClick=${toggle}
    >
      <span class="arrow" aria-hidden="true">▲</span>
      <span aria-hidden="true">${count === null ? t.vote : String(count)}</span>
    </button>
    ${error ? html`<${ErrorLine} error=${error} />` : null}
  </div>`;
}

function Status({ feature }: { feature: Feature }): Node {
  const color = feature.column.color;
  return html`<span class="status">
    <span class="dot" aria-hidden="true" style=${color ? { background: color } : {}}></span>${feature.column.name}
  </span>`;
}

function FeatureRow({
  feature,
  update,
  pending,
}: {
  feature: Feature;
  update: (patch: Partial<Feature>) => void;
  pending?: boolean;
}): Node {
  const { doc, t, openFeature } = useShared();
  return html`<li data-feature=${feature.id}>
    ${votable(doc, feature) ? html`<${VoteButton} feature=${feature} update=${update} />` : null}
    <div class="body">
      <h3>
        <button type="button" class="title" onClick=${(event: Event) => openFeature(feature.id, event.currentTarget as HTMLElement)}>
          ${feature.heading}
        </button>
      </h3>
      <div class="meta">
        <${Status} feature=${feature} />
        ${pending ? html`<span>${t.pending}</span>` : null}
        ${feature.tags.map((tag) => html`<span class="tag" key=${tag.id}>${tag.name}</span>`)}
        ${!votable(doc, feature) && feature.vote_count !== null ? html`<span>${t.votes(feature.vote_count)}</span>` : null}
        ${feature.comment_count !== null ? html`<span>${t.comments(feature.comment_count)}</span>` : null}
      </div>
    </div>
  </li>`;
}

/** Keeps a list of features and patches one of them by id. */
function useFeatureList() {
  const { onFeatureChange } = useShared();
  const [items, setItems] = useState<Feature[]>([]);
  const patch = (id: number) => (change: Partial<Feature>) =>
    setItems((list) => list.map((item) => (item.id === id ? { ...item, ...change } : item)));
  // The list stays drawn (hidden) under an open feature: a vote there shows here on return.
  useEffect(() => onFeatureChange((id, change) => patch(id)(change)), [onFeatureChange]);
  return { items, setItems, patch };
}

function Tabs({ board, select }: { board: string; select: (slug: string) => void }): Node {
  const { doc, t } = useShared();
  const boards = doc.boards;
  const onKey = (event: KeyboardEvent, index: number) => {
    const last = boards.length - 1;
    const next =
      event.key === "ArrowRight"
        ? index === last
          ? 0
          : index + 1
        : event.key === "ArrowLeft"
          ? index === 0
            ? last
            : index - 1
          : event.key === "Home"
            ? 0
            : event.key === "End"
              ? last
              : -1;
    if (next < 0) return;
    event.preventDefault();
    select(boards[next]!.slug);
    const tabs = (event.currentTarget as HTMLElement).parentElement?.querySelectorAll<HTMLElement>("[role=tab]");
    tabs?.[next]?.focus();
  };
  return html`<div role="tablist" aria-label=${t.boards}>
    ${boards.map(
      (entry, index) => html`<button
        type="button"
        role="tab"
        key=${entry.slug}
        id=${`fb-tab-${entry.slug}`}
        aria-selected=${entry.slug === board ? "true" : "false"}
        aria-controls="fb-panel"
        tabindex=${entry.slug === board ? 0 : -1}
        onClick=${() => select(entry.slug)}
        onKeyDown=${(event: KeyboardEvent) => onKey(event, index)}
      >
        ${entry.name}
      </button>`,
    )}
  </div>`;
}

function FeaturesView({
  board,
  select,
  initialSort,
  created,
}: {
  board: string;
  select: (slug: string) => void;
  initialSort: string;
  created: Feature[];
}): Node {
  const { api, doc, t, tick, failed } = useShared();
  const [sort, setSort] = useState(initialSort);
  useEffect(() => setSort(initialSort), [initialSort]);
  const [q, setQ] = useState("");
  const query = useDebounced(q.trim(), SEARCH_DEBOUNCE_MS);
  const [tag, setTag] = useState("");
  const { items, setItems, patch } = useFeatureList();
  const [meta, setMeta] = useState<Meta | null>(null);
  /** The page being read, null when none is. */
  const [loading, setLoading] = useState<number | null>(1);
  const [error, setError] = useState<BoardError | null>(null);
  const sequence = useRef(0);
  const list = useRef<HTMLUListElement>(null);
  const more = useShowMore();
  const mine = created.filter((feature) => feature.board.slug === board || (board === "roadmap" && feature.board.kind === "roadmap"));

  const load = async (page: number) => {
    const asked = ++sequence.current;
    setLoading(page);
    setError(null);
    try {
      const answer = await api.read<Feature[]>(api.projectPath("/features"), listQuery(board, sort, query, tag, page));
      if (asked !== sequence.current) return;
      setItems((list) =>
        page === 1 ? answer.data : [...list, ...answer.data.filter((item) => !list.some((known) => known.id === item.id))],
      );
      setMeta(answer.meta);
      if (page > 1) {
        const fresh = answer.data.find((item) => !items.some((known) => known.id === item.id));
        const title = (selector: string) => list.current?.querySelector<HTMLElement>(`${selector} button.title`);
        more.arrived(
          () => (fresh ? title(`li[data-feature="${fresh.id}"]`) : null),
          () => title("li:last-child"),
        );
      }
    } catch (caught) {
      if (asked === sequence.current) setError(failed(caught));
    } finally {
      if (asked === sequence.current) setLoading(null);
    }
  };
  useEffect(() => {
    void load(1);
  }, [api, board, sort, query, tag, tick]);

  return html`<div>
    <${Tabs} board=${board} select=${select} />
    <div role="tabpanel" id="fb-panel" aria-labelledby=${`fb-tab-${board}`}>
      <div class="filters">
        <div>
          <label for="fb-q">${t.search}</label>
          <input id="fb-q" type="search" value=${q} onInput=${(event: Event) => setQ((event.target as HTMLInputElement).value)} />
        </div>
        <div>
          <label for="fb-sort">${t.sort}</label>
          <select id="fb-sort" value=${sort} onChange=${(event: Event) => setSort((event.target as HTMLSelectElement).value)}>
            ${SORTS.map((name) => html`<option value=${name} key=${name}>${t.sorts[name]}</option>`)}
          </select>
        </div>
        <div>
          <label for="fb-tag">${t.tag}</label>
          <select id="fb-tag" value=${tag} onChange=${(event: Event) => setTag((event.target as HTMLSelectElement).value)}>
            <option value="">${t.allTags}</option>
            ${doc.tags.map((entry) => html`<option value=${String(entry.id)} key=${entry.id}>${entry.name}</option>`)}
          </select>
        </div>
      </div>
      <${ErrorLine} error=${error} />
      <ul class="list" ref=${list} aria-busy=${loading !== null ? "true" : "false"}>
        ${mine.map((feature) => html`<${FeatureRow} key=${`mine-${feature.id}`} feature=${feature} update=${() => {}} pending=${true} />`)}
        ${items.map((feature) => html`<${FeatureRow} key=${feature.id} feature=${feature} update=${patch(feature.id)} />`)}
      </ul>
      ${loading === null && items.length === 0 && !error ? html`<p class="muted">${t.empty}</p>` : null}
      ${loading === 1 ? html`<p class="muted">${t.loading}</p>` : null}
      ${
        meta?.has_more && loading !== 1
          ? html`<${MoreButton} button=${more.button} busy=${loading !== null} onMore=${() => load((meta?.page ?? 1) + 1)} />`
          : null
      }
    </div>
  </div>`;
}

function CommentForm({
  featureId,
  parentId,
  onDone,
  label,
}: {
  featureId: number;
  parentId: number | null;
  onDone: (comment: Comment) => void;
  label: string;
}): Node {
  const { api, t, failed, emit, identityChanged } = useShared();
  const [content, setContent] = useState("");
  const [error, setError] = useState<BoardError | null>(null);
  const [busy, setBusy] = useState(false);
  const id = `fb-comment-${parentId ?? "top"}`;
  const submit = async (event: Event) => {
    event.preventDefault();
    if (!content.trim() || busy) return;
    setBusy(true);
    setError(null);
    const hadIdentity = api.hasIdentity;
    try {
      const comment = await api.write<Comment>("POST", api.projectPath(`/features/${featureId}/comments`), {
        content,
        ...(parentId === null ? {} : { parent_id: parentId }),
      });
      setContent("");
      onDone(comment);
      emit("comment", { comment });
    } catch (caught) {
      setError(failed(caught));
    } finally {
      setBusy(false);
      if (!hadIdentity && api.hasIdentity) identityChanged();
    }
  };
  // Send is aria-disabled, not disabled, while the comment is sent: a disabled button drops focus to the page.
  return html`<form onSubmit=${submit}>
    <div>
      <label for=${id}>${label}</label>
      <textarea id=${id} maxlength="2000" required value=${content} onInput=${(event: Event) => setContent((event.target as HTMLTextAreaElement).value)}></textarea>
    </div>
    <${ErrorLine} error=${error} />
    <div class="form-row"><button type="submit" class="primary" aria-disabled=${busy ? "true" : undefined}>${t.send}</button></div>
  </form>`;
}

/**
 * One comment and its replies. `remove` takes it out of the list once deleted; `focusComment(id)`
 * moves focus, after the next render, to comment `id`'s item (`tabindex="-1"`), or to the
 * comments heading for null: a sent reply takes focus, a deleted reply hands it to the next
 * reply, else the previous, else the comment it answered (docs/widget.md, "Accessibility").
 */
function CommentItem({
  comment,
  setComment,
  remove,
  reply,
  focusComment,
}: {
  comment: Comment;
  setComment: (c: Comment) => void;
  remove: () => void;
  reply: boolean;
  focusComment: (id: number | null) => void;
}): Node {
  const { api, doc, t, failed, locale, identityChanged } = useShared();
  const [error, setError] = useState<BoardError | null>(null);
  const [replying, setReplying] = useState(false);
  const like = async () => {
    setError(null);
    const hadIdentity = api.hasIdentity;
    try {
      const result = await api.write<{ has_liked: boolean; like_count: number }>("POST", api.projectPath(`/comments/${comment.id}/like`));
      setComment({ ...comment, has_liked: result.has_liked, like_count: result.like_count });
    } catch (caught) {
      setError(failed(caught));
    } finally {
      if (!hadIdentity && api.hasIdentity) identityChanged();
    }
  };
  const del = async () => {
    setError(null);
    try {
      await api.write("DELETE", api.projectPath(`/comments/${comment.id}`));
      remove();
    } catch (caught) {
      setError(failed(caught));
    }
  };
  return html`<li tabindex="-1" data-comment=${comment.id}>
    <p><strong>${comment.author_name}</strong>${comment.author_role ? html` <span class="tag">${t.team}</span>` : null}
      <span class="muted"> · ${formatDate(comment.created_at, locale)}</span></p>
    <p class="text">${comment.content}</p>
    <div class="actions">
      ${
        doc.capabilities.can_like
          ? html`<button type="button" aria-pressed=${comment.has_liked ? "true" : "false"} aria-label=${`${t.like}, ${t.likes(comment.like_count)}`} onClick=${like}>
              ${t.like} · ${comment.like_count}
            </button>`
          : html`<span class="muted">${t.likes(comment.like_count)}</span>`
      }
      ${reply && doc.capabilities.can_comment ? html`<button type="button" aria-expanded=${replying ? "true" : "false"} onClick=${() => setReplying(!replying)}>${t.reply}</button>` : null}
      ${comment.is_own ? html`<button type="button" onClick=${del}>${t.delete}</button>` : null}
    </div>
    <${ErrorLine} error=${error} />
    ${
      replying
        ? html`<${CommentForm}
            featureId=${comment.feature_id}
            parentId=${comment.id}
            label=${t.writeReply}
            onDone=${(created: Comment) => {
              setReplying(false);
              setComment({ ...comment, replies: [...comment.replies, created] });
              focusComment(created.id);
            }}
          />`
        : null
    }
    ${
      comment.replies.length > 0
        ? html`<ul class="replies">
            ${comment.replies.map(
              (child) => html`<${CommentItem}
                key=${child.id}
                comment=${child}
                reply=${false}
                setComment=${(changed: Comment) => setComment({ ...comment, replies: comment.replies.map((r) => (r.id === child.id ? changed : r)) })}
                remove=${() => {
                  setComment({ ...comment, replies: comment.replies.filter((r) => r.id !== child.id) });
                  focusComment(neighbour(comment.replies, child.id)?.id ?? comment.id);
                }}
                focusComment=${focusComment}
              />`,
            )}
          </ul>`
        : null
    }
  </li>`;
}

/**
 * One feature with its comments. With `takeFocus` (opened by the voter, not by the `view`
 * attribute) its heading (tabindex -1) takes focus once the feature is drawn, or the back
 * control if the read is refused. A deleted comment hands focus to the next comment, else the
 * previous, else the comments heading (docs/widget.md, "Accessibility").
 */
function FeatureView({ id, takeFocus }: { id: number; takeFocus: boolean }): Node {
  const { api, doc, t, tick, failed, back: goBack, featureChanged } = useShared();
  const [feature, setFeature] = useState<Feature | null>(null);
  const [comments, setComments] = useState<Comment[]>([]);
  const [meta, setMeta] = useState<Meta | null>(null);
  const [error, setError] = useState<BoardError | null>(null);
  const [commentsError, setCommentsError] = useState<BoardError | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const backButton = useRef<HTMLButtonElement>(null);
  const focused = useRef(!takeFocus);
  const section = useRef<HTMLElement>(null);
  const commentsHeading = useRef<HTMLHeadingElement>(null);
  const [loadingComments, setLoadingComments] = useState(false);
  const more = useShowMore();
  const focusLater = useFocusLater();
  const commentItem = (commentId: number) => section.current?.querySelector<HTMLElement>(`li[data-comment="${commentId}"]`);
  const focusComment = (commentId: number | null) =>
    focusLater(() => (commentId === null ? commentsHeading.current : commentItem(commentId)));
  const loadComments = async (page: number) => {
    setLoadingComments(true);
    try {
      const answer = await api.read<Comment[]>(api.projectPath(`/features/${id}/comments`), { sort: "newest", page, per_page: PER_PAGE });
      // A comment written or deleted meanwhile shifts the pages: one already shown may come again.
      setComments((list) =>
        page === 1 ? answer.data : [...list, ...answer.data.filter((item) => !list.some((known) => known.id === item.id))],
      );
      setMeta(answer.meta);
      if (page > 1) {
        const fresh = answer.data.find((item) => !comments.some((known) => known.id === item.id));
        more.arrived(
          () => (fresh ? commentItem(fresh.id) : null),
          () => section.current?.querySelector<HTMLElement>("ul.comments > li:last-child"),
        );
      }
    } catch (caught) {
      setCommentsError(failed(caught));
    } finally {
      setLoadingComments(false);
    }
  };
  useEffect(() => {
    setError(null);
    setCommentsError(null);
    api
      .read<Feature>(api.projectPath(`/features/${id}`))
      .then((answer) => {
        setFeature(answer.data);
        if (answer.data.comment_count !== null) void loadComments(1);
      })
      .catch((caught) => setError(failed(caught)));
  }, [api, id, tick]);
  useEffect(() => {
    if (focused.current || (!feature && !error)) return;
    focused.current = true;
    (error ? backButton : heading).current?.focus();
  }, [feature, error]);
  const back = html`<button type="button" ref=${backButton} onClick=${goBack}>← ${t.back}</button>`;
  // One wrapper in every state, so that a focused back control is kept when the feature arrives.
  if (error) return html`<article class="feature">${back}<${ErrorLine} error=${error} /></article>`;
  if (!feature) return html`<article class="feature">${back}<p class="muted">${t.loading}</p></article>`;
  const update = (patch: Partial<Feature>) => {
    setFeature((current) => (current ? { ...current, ...patch } : current));
    featureChanged(id, patch);
  };
  const setComment = (changed: Comment) => setComments((list) => list.map((item) => (item.id === changed.id ? changed : item)));
  return html`<article class="feature">
    ${back}
    <div class="top" style=${{ marginTop: "12px" }}>
      ${votable(doc, feature) ? html`<${VoteButton} feature=${feature} update=${update} />` : null}
      <div class="body">
        <h3 tabindex="-1" ref=${heading}>${feature.heading}</h3>
        <div class="meta">
          <span>${t.status}: <${Status} feature=${feature} /></span>
          ${feature.tags.map((tag) => html`<span class="tag" key=${tag.id}>${tag.name}</span>`)}
          ${!votable(doc, feature) && feature.vote_count !== null ? html`<span>${t.votes(feature.vote_count)}</span>` : null}
          ${feature.release ? html`<span>${t.shippedIn} ${feature.release.name}</span>` : null}
        </div>
      </div>
    </div>
    ${feature.description ? html`<p class="text">${feature.description}</p>` : null}
    ${
      feature.developer_response
        ? html`<div class="response">
            <h4>${t.response}${feature.response_is_denial ? html` · <span>${t.denied}</span>` : null}</h4>
            <p class="text">${feature.developer_response}</p>
          </div>`
        : null
    }
    ${
      feature.comment_count !== null
        ? html`<section aria-labelledby="fb-comments" ref=${section}>
            <h4 id="fb-comments" tabindex="-1" ref=${commentsHeading}>${t.commentsTitle} (${feature.comment_count})</h4>
            ${
              doc.capabilities.can_comment
                ? html`<${CommentForm}
                    featureId=${feature.id}
                    parentId=${null}
                    label=${t.writeComment}
                    onDone=${(comment: Comment) => {
                      setComments((list) => [comment, ...list]);
                      update({ comment_count: (feature.comment_count ?? 0) + 1 });
                    }}
                  />`
                : null
            }
            <${ErrorLine} error=${commentsError} />
            ${comments.length === 0 && !commentsError ? html`<p class="muted">${t.noComments}</p>` : null}
            <ul class="comments">
              ${comments.map(
                (comment) => html`<${CommentItem}
                  key=${comment.id}
                  comment=${comment}
                  reply=${true}
                  setComment=${setComment}
                  remove=${() => {
                    setComments((list) => list.filter((item) => item.id !== comment.id));
                    update({ comment_count: Math.max(0, (feature.comment_count ?? 1) - 1 - comment.replies.length) });
                    focusComment(neighbour(comments, comment.id)?.id ?? null);
                  }}
                  focusComment=${focusComment}
                />`,
              )}
            </ul>
            ${meta?.has_more ? html`<${MoreButton} button=${more.button} busy=${loadingComments} onMore=${() => loadComments(meta.page + 1)} />` : null}
          </section>`
        : null
    }
  </article>`;
}

/**
 * The suggestion form. Opened by the voter, its first field takes focus; after a feature is
 * created, the notice that it awaits review does (docs/widget.md, "Focus").
 */
function SuggestView({ onCreated }: { onCreated: (feature: Feature) => void }): Node {
  const { api, t, failed, emit, identityChanged } = useShared();
  const [heading, setHeading] = useState("");
  const [description, setDescription] = useState("");
  const [error, setError] = useState<BoardError | null>(null);
  const [done, setDone] = useState(false);
  const [busy, setBusy] = useState(false);
  const first = useRef<HTMLInputElement>(null);
  const notice = useRef<HTMLParagraphElement>(null);
  useEffect(() => first.current?.focus(), []);
  // The form was emptied: focus goes to the notice that says what became of the suggestion.
  useEffect(() => {
    if (done) notice.current?.focus();
  }, [done]);
  const typed = useDebounced(heading.trim(), SIMILAR_DEBOUNCE_MS);
  const { items: similar, setItems: setSimilar, patch } = useFeatureList();
  useEffect(() => {
    if (typed.length < 3) {
      setSimilar([]);
      return;
    }
    let current = true;
    api
      .read<Feature[]>(api.projectPath("/features/similar"), { q: typed, limit: 5 })
      .then((answer) => current && setSimilar(answer.data))
      .catch(() => current && setSimilar([]));
    return () => {
      current = false;
    };
  }, [api, typed, setSimilar]);
  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    setError(null);
    setDone(false);
    const hadIdentity = api.hasIdentity;
    try {
      const feature = await api.write<Feature>("POST", api.projectPath("/features"), { heading, description });
      setHeading("");
      setDescription("");
      setDone(true);
      onCreated(feature);
      emit("suggest", { feature });
    } catch (caught) {
      setError(failed(caught));
    } finally {
      setBusy(false);
      if (!hadIdentity && api.hasIdentity) identityChanged();
    }
  };
  // Submit is aria-disabled, not disabled, while sending: a disabled button drops focus to the page.
  return html`<form onSubmit=${submit} aria-labelledby="fb-suggest-title">
    <h3 id="fb-suggest-title">${t.suggest}</h3>
    ${done ? html`<p class="notice" role="status" tabindex="-1" ref=${notice}>${t.awaitingReview}</p>` : null}
    <div>
      <label for="fb-heading">${t.heading}</label>
      <input id="fb-heading" ref=${first} maxlength="254" required value=${heading} onInput=${(event: Event) => setHeading((event.target as HTMLInputElement).value)} />
    </div>
    <div>
      <label for="fb-description">${t.description}</label>
      <textarea id="fb-description" maxlength="2000" required value=${description} onInput=${(event: Event) => setDescription((event.target as HTMLTextAreaElement).value)}></textarea>
    </div>
    ${
      similar.length > 0
        ? html`<section aria-labelledby="fb-similar">
            <h4 id="fb-similar">${t.similar}</h4>
            <ul class="list">${similar.map((feature) => html`<${FeatureRow} key=${feature.id} feature=${feature} update=${patch(feature.id)} />`)}</ul>
          </section>`
        : null
    }
    <${ErrorLine} error=${error} />
    <div class="form-row"><button type="submit" class="primary" aria-disabled=${busy ? "true" : undefined}>${t.submit}</button></div>
  </form>`;
}

function ChangelogView(): Node {
  const { api, t, tick, failed, locale } = useShared();
  const [releases, setReleases] = useState<Release[]>([]);
  const [meta, setMeta] = useState<Meta | null>(null);
  const [error, setError] = useState<BoardError | null>(null);
  /** The page being read, null when none is. */
  const [loading, setLoading] = useState<number | null>(1);
  const section = useRef<HTMLElement>(null);
  const more = useShowMore();
  const load = async (page: number) => {
    setLoading(page);
    try {
      const answer = await api.read<Release[]>(api.projectPath("/changelog"), { page, per_page: 10 });
      setReleases((list) =>
        page === 1 ? answer.data : [...list, ...answer.data.filter((item) => !list.some((known) => known.id === item.id))],
      );
      setMeta(answer.meta);
      if (page > 1) {
        const fresh = answer.data.find((item) => !releases.some((known) => known.id === item.id));
        const name = (selector: string) => section.current?.querySelector<HTMLElement>(`${selector} > h3`);
        more.arrived(
          () => (fresh ? name(`article[data-release="${fresh.id}"]`) : null),
          () => name("article.release:last-of-type"),
        );
      }
    } catch (caught) {
      setError(failed(caught));
    } finally {
      setLoading(null);
    }
  };
  useEffect(() => {
    void load(1);
  }, [api, tick]);
  return html`<section aria-labelledby="fb-changelog" ref=${section}>
    <h3 id="fb-changelog" class="sr">${t.changelog}</h3>
    <${ErrorLine} error=${error} />
    ${releases.map(
      (release) => html`<article class="release" key=${release.id} data-release=${release.id}>
        <h3 tabindex="-1">${release.name}</h3>
        <p class="muted">${release.is_featured ? `${t.featured} · ` : ""}${formatDate(release.published_at, locale)}</p>
        ${release.body_html ? html`<div class="html" dangerouslySetInnerHTML=${{ __html: release.body_html }}></div>` : null}
      </article>`,
    )}
    ${loading === 1 ? html`<p class="muted">${t.loading}</p>` : null}
    ${loading === null && releases.length === 0 && !error ? html`<p class="muted">${t.empty}</p>` : null}
    ${meta?.has_more && loading !== 1 ? html`<${MoreButton} button=${more.button} busy=${loading !== null} onMore=${() => load(meta.page + 1)} />` : null}
  </section>`;
}

/**
 * The notification bell: a disclosure button with the unread count; its panel lists the
 * notifications. Escape in the panel closes it and returns focus to the bell; "Mark all read"
 * (gone once nothing is unread) leaves focus on the bell (docs/widget.md, "Accessibility").
 */
function Bell(): Node {
  const { api, t, tick, failed, openFeature, announce } = useShared();
  const bell = useRef<HTMLButtonElement>(null);
  const [unread, setUnread] = useState(0);
  const [expanded, setExpanded] = useState(false);
  const [items, setItems] = useState<Notification[]>([]);
  const [error, setError] = useState<BoardError | null>(null);
  const count = () =>
    api
      .read<Notification[]>(api.projectPath("/notifications"), { unread: true, per_page: 1 })
      .then((answer) => setUnread(answer.meta?.total ?? 0))
      .catch((caught) => setError(failed(caught)));
  useEffect(() => {
    void count();
  }, [api, tick]);
  const toggle = async () => {
    const next = !expanded;
    setExpanded(next);
    if (!next) return;
    try {
      setItems((await api.read<Notification[]>(api.projectPath("/notifications"), { per_page: PER_PAGE })).data);
    } catch (caught) {
      setError(failed(caught));
    }
  };
  const markAll = async (event: Event) => {
    const button = event.currentTarget as HTMLElement;
    try {
      await api.write("POST", api.projectPath("/notifications/read"), { all: true });
      setItems((list) => list.map((item) => ({ ...item, read: true })));
      setUnread(0);
      announce(t.unread(0));
      // The button goes with the last unread notification: focus to the bell, which shows the count.
      if (button.matches(":focus")) bell.current?.focus();
    } catch (caught) {
      setError(failed(caught));
    }
  };
  const onKey = (event: KeyboardEvent) => {
    if (event.key !== "Escape" || !expanded) return;
    event.preventDefault();
    setExpanded(false);
    bell.current?.focus();
  };
  return html`<div onKeyDown=${onKey}>
    <button type="button" class="bell" ref=${bell} aria-expanded=${expanded ? "true" : "false"} aria-controls="fb-notifications" onClick=${toggle}>
      <svg class="bell-icon" aria-hidden="true" viewBox="0 0 24 24" width="16" height="16"><path fill="currentColor" d="M12 22a2.5 2.5 0 0 0 2.45-2h-4.9A2.5 2.5 0 0 0 12 22Zm7-6V11a7 7 0 0 0-5.5-6.84V3.5a1.5 1.5 0 0 0-3 0v.66A7 7 0 0 0 5 11v5l-2 2v1h18v-1Z"/></svg> ${t.notifications}<span class="badge" aria-label=${t.unread(unread)}>${unread}</span>
    </button>
    ${
      expanded
        ? html`<div class="panel" id="fb-notifications">
            <${ErrorLine} error=${error} />
            ${items.length === 0 ? html`<p class="muted">${t.noNotifications}</p>` : null}
            <ul>
              ${items.map(
                (item) => html`<li key=${item.id} class=${item.read ? "" : "unread"}>
                  <button type="button" class="title" onClick=${(event: Event) => openFeature(item.feature.id, event.currentTarget as HTMLElement)}>
                    ${t.notification(item.type)}: ${item.feature.heading}
                  </button>
                </li>`,
              )}
            </ul>
            ${unread > 0 ? html`<button type="button" onClick=${markAll}>${t.markAllRead}</button>` : null}
          </div>`
        : null
    }
  </div>`;
}

export interface AppProps {
  config: AppConfig;
  host: HTMLElement;
  tick: number;
  /** Receives the BoardDocument's theme once loaded (the element writes its custom properties). */
  onTheme: (theme: BoardDocument["theme"]) => void;
}

/** The whole board for `config`; `tick` changes on refresh(). */
export function App({ config, host, tick, onTheme }: AppProps): Node {
  const t = textsFor(config.locale);
  const locale = config.locale === "de" ? "de" : "en";
  const api = useMemo(() => {
    const created = new BoardApi({ base: config.api, project: config.project, key: config.key, ssoToken: config.ssoToken });
    // The board document and, when the list is what opens, its first page, asked at once: the
    // list's own read takes the answer, so the first features need one round trip, not two
    // (clients-v3.md, "Quality bar", Speed).
    created.prefetch(created.projectPath());
    if (parseView(config.view).kind === "features")
      created.prefetch(created.projectPath("/features"), listQuery(config.board || "roadmap", config.sort || "top", "", "", 1));
    return created;
  }, [config.api, config.project, config.key, config.ssoToken]);
  const [doc, setDoc] = useState<BoardDocument | null>(null);
  const [fatal, setFatal] = useState<BoardError | null>(null);
  // The view under an open feature stays mounted (hidden), so that going back finds the list as
  // it was (search, pages, the control that opened the feature) and focus can return there.
  const [view, setView] = useState<BaseView>(baseOf(parseView(config.view)));
  const [detail, setDetail] = useState<{ id: number; takeFocus: boolean } | null>(detailOf(parseView(config.view)));
  useEffect(() => {
    setView(baseOf(parseView(config.view)));
    setDetail(detailOf(parseView(config.view)));
  }, [config.view]);
  /** The control that opened the feature view; focus goes back to it. */
  const opener = useRef<HTMLElement | null>(null);
  /** Focus to move once the next render is in the DOM. */
  const pendingFocus = useRef<(() => void) | null>(null);
  useEffect(() => {
    const move = pendingFocus.current;
    pendingFocus.current = null;
    move?.();
  });
  const listeners = useRef(new Set<(id: number, patch: Partial<Feature>) => void>());
  // One function for the element's life: lists subscribe once.
  const onFeatureChange = useRef((listener: (id: number, patch: Partial<Feature>) => void) => {
    listeners.current.add(listener);
    return () => void listeners.current.delete(listener);
  });
  const [board, setBoard] = useState(config.board || "roadmap");
  useEffect(() => setBoard(config.board || "roadmap"), [config.board]);
  const [live, setLive] = useState("");
  const [created, setCreated] = useState<Feature[]>([]);
  const [identity, setIdentity] = useState(0);

  const emit = (name: string, detail: unknown) =>
    host.dispatchEvent(new CustomEvent(`feedback-board:${name}`, { detail, bubbles: true, composed: true }));
  const failed = (caught: unknown): BoardError => {
    const error = caught instanceof BoardError ? caught : new BoardError("network_error", t.networkError, 0);
    emit("error", { code: error.code, message: error.message, status: error.status });
    return error;
  };

  useEffect(() => {
    let current = true;
    setFatal(null);
    api
      .read<BoardDocument>(api.projectPath())
      .then((answer) => {
        if (!current) return;
        setDoc(answer.data);
        onTheme(answer.data.theme);
        emit("ready", { project: config.project });
      })
      .catch((caught) => current && setFatal(failed(caught)));
    return () => {
      current = false;
    };
  }, [api, tick]);

  if (fatal) return html`<p class="error" role="alert">${fatal.message}</p>`;
  if (!doc) return html`<p class="muted" role="status">${t.loading}</p>`;

  const shared: Shared = {
    api,
    t,
    locale,
    doc,
    emit,
    failed,
    announce: (text) => setLive(text),
    openFeature: (id, from) => {
      opener.current = from;
      setDetail({ id, takeFocus: true });
    },
    back: () => {
      const from = opener.current;
      opener.current = null;
      const moveBack = (tries: number) => {
        const root = host.shadowRoot;
        // Back to the control that opened the feature; if it is gone, to the current view's nav entry.
        const target =
          from?.isConnected && !from.closest("[hidden]") ? from : root?.querySelector<HTMLElement>('nav [aria-current="page"]');
        target?.focus();
        // A render still on its way (a list updating after a vote) can leave nothing focusable yet:
        // try again on the next frames rather than leave focus with the page.
        if (root?.activeElement !== target && tries > 0) requestAnimationFrame(() => moveBack(tries - 1));
      };
      pendingFocus.current = () => moveBack(5);
      setDetail(null);
    },
    featureChanged: (id, patch) => {
      for (const listener of listeners.current) listener(id, patch);
    },
    onFeatureChange: onFeatureChange.current,
    tick,
    identityChanged: () => setIdentity(identity + 1),
  };
  // A nav entry keeps focus, except "suggest", whose form's first field takes it.
  const nav = (target: BaseView, label: string) =>
    html`<button
      type="button"
      aria-current=${view.kind === target.kind && !detail ? "page" : undefined}
      onClick=${() => {
        setView(target);
        setDetail(null);
      }}
    >
      ${label}
    </button>`;
  return html`<${SharedContext.Provider} value=${shared}>
    <div class="top">
      <h2>${doc.project.name}</h2>
      ${api.hasIdentity ? html`<${Bell} key=${identity} />` : null}
    </div>
    <nav class="nav" aria-label=${doc.project.name}>
      ${nav({ kind: "features" }, t.features)} ${nav({ kind: "changelog" }, t.changelog)}
      ${doc.capabilities.can_suggest ? nav({ kind: "suggest" }, t.suggest) : null}
    </nav>
    <div style=${{ marginTop: "12px" }}>
      <div hidden=${detail !== null}>
        ${view.kind === "features" ? html`<${FeaturesView} board=${board} select=${setBoard} initialSort=${config.sort || "top"} created=${created} />` : null}
        ${view.kind === "suggest" ? html`<${SuggestView} onCreated=${(feature: Feature) => setCreated((list) => [feature, ...list])} />` : null}
        ${view.kind === "changelog" ? html`<${ChangelogView} />` : null}
      </div>
      ${detail ? html`<${FeatureView} key=${detail.id} id=${detail.id} takeFocus=${detail.takeFocus} />` : null}
    </div>
    <div class="sr" aria-live="polite">${live}</div>
  <//>`;
}
