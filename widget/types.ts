/**
 * The shapes of the public API's answers the widget reads, taken from the TypeScript client's
 * types generated from openapi/openapi.json (docs/contract/feedback-board-api-v3.md, "Resources
 * and their fields"; docs/contract/engagement-api-v3.md for notifications and similar features),
 * so that the widget and the document cannot drift apart. Type-only: nothing of the client is
 * bundled.
 */
import type * as Api from "../clients/typescript/src/generated/types.gen.ts";

export type BoardDocument = Api.BoardDocument;
export type ThemeColors = Api.ThemeColors;
export type Feature = Api.FeatureObject;
export type Comment = Api.CommentObject;
export type Release = Api.ReleaseObject;
export type Identity = Api.IdentityObject;
export type Notification = Api.NotificationObject;
export type Meta = Api.Meta;
export type VoteResult = Api.VoteObject;
