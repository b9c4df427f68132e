/**
 * @feedback-board/client: the typed TypeScript client of the Feedback Board API v3
 * (docs/contract/clients-v3.md, "The TypeScript client"; usage: docs/client.md).
 */
export {
  type ClientOptions,
  createClient,
  type Envelope,
  type FeedbackBoardClient,
  type OperationArgs,
  type OperationId,
  type OperationMethod,
  type OperationResult,
  type Voter,
} from "./client.js";
export { FeedbackBoardError, type FeedbackBoardErrorFields } from "./errors.js";
export type * from "./generated/types.gen.js";
export type { RetryOptions } from "./transport.js";
export { verifyWebhook, type WebhookEvent } from "./webhooks.js";
