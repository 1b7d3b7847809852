/**
 * Repository interfaces: the only way the gateway touches its database. Two
 * implementations (SQLite via node:sqlite, PostgreSQL via pg) share one Kysely
 * query path; the contract suite in test/store/store-contract.ts runs against both.
 *
 * Every rule here must hold across several gateway processes sharing one
 * PostgreSQL database, so anything that must happen once is one atomic statement.
 */

export type Chain = 'sui' | 'solana';

export interface Owner {
  chain: Chain;
  address: string;
}

export interface Project {
  id: string;
  slug: string;
  name: string;
  description: string;
  category: string;
  owner: Owner;
  /**
   * Opted in to stock x402 v2 payers (DESIGN §4.12): the platform receives the whole
   * amount of a v2 payment and the provider's share becomes a payable.
   */
  x402Exact: boolean;
  createdAt: string;
  updatedAt: string;
}

export type OriginAuthType = 'none' | 'bearer' | 'header' | 'query';

export interface Api {
  id: string;
  projectId: string;
  name: string;
  baseUrl: string;
  authType: OriginAuthType;
  /** Header or query parameter name (for 'header' and 'query'). */
  authName: string | null;
  /** AES-256-GCM ciphertext of the origin secret (opaque to the store). */
  authSecretEnc: string | null;
  /** Last 4 characters of the secret, the only part ever shown back. */
  authSecretLast4: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface Endpoint {
  id: string;
  projectId: string;
  apiId: string;
  method: string;
  /** Registered path without a leading slash, e.g. "v1/weather". */
  path: string;
  /** Price in atomic USDC units. */
  price: bigint;
  endpointType: 'external_proxy';
  description: string;
  timeoutMs: number;
  enabled: boolean;
  inputSchema: unknown | null;
  outputSchema: unknown | null;
  createdAt: string;
  updatedAt: string;
}

export interface Rail {
  projectId: string;
  chain: Chain;
  network: string;
  providerRecipient: string;
  updatedAt: string;
}

/** What a caller supplies; the store assigns the id and the timestamps. */
export type NewProject = Omit<Project, 'id' | 'createdAt' | 'updatedAt' | 'x402Exact'> & {
  x402Exact?: boolean;
};
export type ProjectPatch = Partial<Pick<Project, 'name' | 'description' | 'category' | 'x402Exact'>>;

export type NewApi = Omit<Api, 'id' | 'createdAt' | 'updatedAt'>;
export type ApiPatch = Partial<Omit<NewApi, 'projectId'>>;

/** `endpointType` is left out: every endpoint is an external proxy for now. */
export type NewEndpoint = Omit<Endpoint, 'id' | 'endpointType' | 'createdAt' | 'updatedAt'>;
export type EndpointPatch = Partial<Omit<NewEndpoint, 'projectId'>>;

export interface DirectoryQuery {
  q?: string;
  category?: string;
  /** Opaque cursor from a previous page (the last slug seen). */
  after?: string;
  limit: number;
}

/** Thrown by create/update when a unique key (slug, endpoint method+path) is taken. */
export class UniqueViolationError extends Error {
  override readonly name = 'UniqueViolationError';
}

export interface ProjectRepo {
  create(p: NewProject): Promise<Project>;
  bySlug(slug: string): Promise<Project | null>;
  byId(id: string): Promise<Project | null>;
  listByOwner(owner: Owner): Promise<Project[]>;
  listAll(): Promise<Project[]>;
  update(id: string, patch: ProjectPatch): Promise<Project | null>;
  /** Deletes the project with its APIs, endpoints and rails. */
  delete(id: string): Promise<boolean>;
  /** Projects with at least one enabled endpoint and at least one rail, ordered by slug. */
  listListed(q: DirectoryQuery): Promise<Project[]>;
  /** Category -> number of listed projects. */
  listedCategories(): Promise<{ category: string; count: number }[]>;
}

export interface ApiRepo {
  create(a: NewApi): Promise<Api>;
  byId(projectId: string, id: string): Promise<Api | null>;
  list(projectId: string): Promise<Api[]>;
  update(projectId: string, id: string, patch: ApiPatch): Promise<Api | null>;
  /** Deletes the API and the endpoints that forward to it. */
  delete(projectId: string, id: string): Promise<boolean>;
}

export interface EndpointRepo {
  /** Methods are stored upper-case. Rejects an `apiId` that is not one of the project's APIs. */
  create(e: NewEndpoint): Promise<Endpoint>;
  byId(projectId: string, id: string): Promise<Endpoint | null>;
  /** The hot-path lookup for /p/:slug/*: exact method and path. */
  find(projectId: string, method: string, path: string): Promise<Endpoint | null>;
  list(projectId: string): Promise<Endpoint[]>;
  /**
   * Every enabled endpoint of every project with its API's origin, in one query (the
   * active health check's round: one query however large the catalogue), by API then id.
   */
  listEnabledOrigins(): Promise<EnabledEndpointOrigin[]>;
  update(projectId: string, id: string, patch: EndpointPatch): Promise<Endpoint | null>;
  delete(projectId: string, id: string): Promise<boolean>;
}

/** An enabled endpoint and where its API forwards to. */
export interface EnabledEndpointOrigin {
  endpointId: string;
  projectSlug: string;
  apiId: string;
  baseUrl: string;
}

export interface RailRepo {
  upsert(r: Omit<Rail, 'updatedAt'>): Promise<Rail>;
  list(projectId: string): Promise<Rail[]>;
  delete(projectId: string, chain: Chain): Promise<boolean>;
}

// ---------------------------------------------------------------------------
// Redemptions: the exactly-once core (DESIGN §4.4, §4.5).

export interface RedemptionKey {
  chain: Chain;
  network: string;
  txId: string;
  nonce: string;
}

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
}

export interface Redemption extends RedemptionKey {
  id: string;
  requestHash: string;
  requirementId: string;
  payer: string;
  /** 'in_progress' holds a lease; 'retryable' may be claimed again; 'delivered' is final. */
  state: 'in_progress' | 'retryable' | 'delivered';
  /** Fencing token: increments on every claim, so a stale holder cannot complete. */
  attempt: number;
  leaseUntilMs: number;
  /** Failed upstream attempts so far (release with `failed`). */
  failures: number;
  /** A released payment may be claimed again from this time on (the retry budget); 0 = at once. */
  retryAtMs: number;
  /** Set once delivered; null again after pruneResponses dropped it (the row stays). */
  response: StoredResponse | null;
  createdAtMs: number;
  /** What was sold: null for inference. */
  projectId: string | null;
  endpointId: string | null;
  /** Gross paid (sum of the splits) and the platform's fee, atomic units. */
  amount: bigint;
  fee: bigint;
  /** Answers served again from the stored response. */
  replays: number;
  /** Set once the operator began refunding this undelivered payment (then never claimable again). */
  refundState: string | null;
}

export interface ClaimInput extends RedemptionKey {
  requestHash: string;
  requirementId: string;
  payer: string;
  /** Opaque details of the paid request kept with the redemption (amounts, endpoint id). */
  meta: Record<string, unknown>;
  /** What is sold (null for inference) and for how much: the read models' columns. */
  projectId: string | null;
  endpointId: string | null;
  amount: bigint;
  fee: bigint;
  nowMs: number;
  leaseMs: number;
}

export type ClaimResult =
  /** This caller holds the lease and must deliver (complete) or give back (release). */
  | { kind: 'claimed'; redemption: Redemption }
  /** Same payment and same request, already delivered: replay the stored response. */
  | { kind: 'delivered'; redemption: Redemption }
  /** Same payment and same request, another attempt holds a live lease. */
  | { kind: 'in_progress'; redemption: Redemption }
  /** Same payment and same request, released after a failure; claimable again from `retryAtMs`. */
  | { kind: 'cooling'; redemption: Redemption }
  /** Same payment and same request, never delivered and refunded (or being refunded) by the operator. */
  | { kind: 'refunded'; redemption: Redemption }
  /** The transaction or the nonce was redeemed for a different request. */
  | { kind: 'used_elsewhere'; by: 'tx' | 'nonce' };

export interface RedemptionRepo {
  /**
   * One atomic claim keyed uniquely by (chain, network, txId) and by nonce. Of any
   * number of concurrent callers across processes, exactly one gets 'claimed' for a
   * fresh key; a 'retryable' row or an expired lease is taken over by exactly one.
   */
  claim(input: ClaimInput): Promise<ClaimResult>;
  /** Looks up by transaction, for answering a replay without asking the chain. */
  byTx(chain: Chain, network: string, txId: string): Promise<Redemption | null>;
  /** Stores the delivered response; false if `attempt` no longer holds the lease. */
  complete(id: string, attempt: number, response: StoredResponse, nowMs: number): Promise<boolean>;
  /**
   * Gives the payment back for a retry of the same request; false if not the holder.
   * `failed` counts a failed upstream attempt; `retryAtMs` keeps it from being claimed
   * again before then (the per-proof retry budget).
   */
  release(id: string, attempt: number, opts?: { failed?: boolean; retryAtMs?: number }): Promise<boolean>;
  /** Extends a live lease (long streams); false if not the holder. */
  renew(id: string, attempt: number, leaseUntilMs: number): Promise<boolean>;
  /** Counts one more answer served from the stored response (best effort; the read models show it). */
  noteReplay(id: string): Promise<void>;
  /** Drops stored response bodies older than the cutoff (the redemption row itself stays forever). */
  pruneResponses(olderThanMs: number): Promise<number>;
}

// ---------------------------------------------------------------------------
// Sign-in and sessions (DESIGN §4.8).

export interface AuthChallenge {
  nonce: string;
  chain: Chain;
  address: string;
  message: string;
  issuedAtMs: number;
  expiresAtMs: number;
}

export interface Session {
  tokenHash: string;
  owner: Owner;
  createdAtMs: number;
  expiresAtMs: number;
}

export interface AuthRepo {
  putChallenge(c: AuthChallenge): Promise<void>;
  /**
   * The challenge if it is still open (unused, not expired at `nowMs`), without
   * consuming it; null otherwise. Lets sign-in run its checks before it consumes.
   */
  openChallenge(nonce: string, nowMs: number): Promise<AuthChallenge | null>;
  /**
   * Atomically marks the challenge used and returns it; null if unknown, already
   * used, expired at `nowMs`, or (when `message` is given) issued with another
   * message. Exactly one of concurrent callers gets it.
   */
  consumeChallenge(nonce: string, nowMs: number, message?: string): Promise<AuthChallenge | null>;
  createSession(s: Session): Promise<void>;
  /** The live (not revoked, not expired) session for a token hash. */
  session(tokenHash: string, nowMs: number): Promise<Session | null>;
  revokeSession(tokenHash: string): Promise<boolean>;
  /** Deletes challenges and sessions that expired before `nowMs` (used or not); returns how many. */
  pruneExpired(nowMs: number): Promise<number>;
}

// ---------------------------------------------------------------------------
// Conversations (DESIGN §4.10).

export interface Conversation {
  id: string;
  owner: Owner;
  title: string;
  model: string | null;
  metadata: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

export interface ConversationItem {
  id: string;
  conversationId: string;
  seq: number;
  role: 'system' | 'user' | 'assistant';
  content: string;
  /** The redemption that paid for this turn, if any (a paid turn is stored once). */
  redemptionId: string | null;
  usage: Record<string, unknown> | null;
  createdAt: string;
}

export interface ConversationRepo {
  create(c: {
    owner: Owner;
    title: string;
    model: string | null;
    metadata: Record<string, unknown>;
  }): Promise<Conversation>;
  byId(owner: Owner, id: string): Promise<Conversation | null>;
  /** Newest first; `before` is the id of the last one seen. */
  list(owner: Owner, opts: { limit: number; before?: string }): Promise<Conversation[]>;
  update(
    owner: Owner,
    id: string,
    patch: { title?: string; model?: string | null; metadata?: Record<string, unknown> },
  ): Promise<Conversation | null>;
  delete(owner: Owner, id: string): Promise<boolean>;
  /** Appends items atomically with consecutive seq numbers (from 1); rejects for an unknown conversation. */
  append(
    conversationId: string,
    items: Omit<ConversationItem, 'id' | 'conversationId' | 'seq' | 'createdAt'>[],
  ): Promise<ConversationItem[]>;
  items(conversationId: string, opts: { limit: number; after?: number }): Promise<ConversationItem[]>;
}

// ---------------------------------------------------------------------------
// Payables: the provider's share of v2 payments the platform received whole, paid out
// in batches by the operator (DESIGN §4.12; docs/operations-payouts.md).

/**
 * 'pending' is owed; 'paying' is assigned to an unfinished payout; 'paid' is final;
 * 'cancelled' is final too: its payment was refunded before the share was paid out.
 */
export type PayableState = 'pending' | 'paying' | 'paid' | 'cancelled';

export interface Payable {
  id: string;
  /** The paid request this share comes from; one payable per redemption. */
  redemptionId: string;
  projectId: string;
  chain: Chain;
  network: string;
  /** The provider's rail recipient when the payment settled. */
  recipient: string;
  /** Atomic USDC units, > 0. */
  amount: bigint;
  createdAtMs: number;
  state: PayableState;
  payoutId: string | null;
  payoutTx: string | null;
  paidAtMs: number | null;
}

export interface NewPayable {
  redemptionId: string;
  projectId: string;
  chain: Chain;
  network: string;
  recipient: string;
  amount: bigint;
  nowMs: number;
}

export interface RecipientDue {
  recipient: string;
  amount: bigint;
  count: number;
}

export interface PayableTotals {
  chain: Chain;
  network: string;
  /** Owed and not yet in a payout ('pending' plus 'paying'). */
  pending: bigint;
  paid: bigint;
}

/**
 * 'open': holds the payout lock, payables may be assigned, nothing signed yet.
 * 'sent': the signed transaction is recorded and may be on-chain. 'paid' and
 * 'failed' are final (failed: the transaction did not move money and can never land).
 */
export type PayoutState = 'open' | 'sent' | 'paid' | 'failed';

/** A transfer from the platform wallet (a payout, a refund): leased, fenced, its signed transaction recorded before sending. */
export interface FencedTransfer {
  /** Fencing token: increments when a run takes over a transfer whose lease lapsed. */
  attempt: number;
  leaseUntilMs: number;
  /** Transaction id (Solana signature, Sui digest), known before sending. */
  tx: string | null;
  /** The signed transaction, so a later run can re-send and check it (chain-specific text). */
  txBytes: string | null;
  /** When the transaction can no longer land (Solana: last valid block height); null if unknown. */
  txExpiry: string | null;
  error: string | null;
  createdAtMs: number;
  updatedAtMs: number;
}

/** A transfer this caller may act on is identified by id and attempt (the fence). */
export interface FencedHold {
  id: string;
  attempt: number;
}

export interface Payout extends FencedTransfer {
  id: string;
  chain: Chain;
  network: string;
  state: PayoutState;
}

export type PayoutHold = FencedHold;

export type BeginPayoutResult =
  /** A fresh 'open' payout: this caller holds the lock. */
  | { kind: 'begun'; payout: Payout }
  /** An unfinished payout whose lease lapsed, now held by this caller: resolve it first. */
  | { kind: 'recover'; payout: Payout }
  /** Another run holds the lock until `payout.leaseUntilMs`. */
  | { kind: 'busy'; payout: Payout };

export interface PayableRepo {
  /**
   * Records the provider's share of one paid request. Idempotent by redemption: the same
   * redemption again (also concurrently, across processes) adds no row and returns the
   * first one. Throws RangeError unless `amount` > 0.
   */
  record(p: NewPayable): Promise<Payable>;
  byRedemption(redemptionId: string): Promise<Payable | null>;
  /** Pending payables of a chain and network, oldest first. */
  pending(q: { chain: Chain; network: string; limit: number }): Promise<Payable[]>;
  /** Pending totals per recipient, oldest debt first (then by recipient), at most `limit` recipients. */
  pendingByRecipient(q: { chain: Chain; network: string; limit: number }): Promise<RecipientDue[]>;
  /**
   * Marks payables paid by `tx`. Only a 'pending' row, or a 'paying' row of this same payout,
   * changes (one conditional statement), so no row is ever marked by two payouts. Returns
   * the ids it marked.
   */
  markPaid(ids: string[], o: { payoutId: string; tx: string; nowMs: number }): Promise<string[]>;
  /** Pending and paid totals of a project, per chain and network (exact, in atomic units). */
  summary(projectId: string): Promise<PayableTotals[]>;
  byPayout(payoutId: string): Promise<Payable[]>;

  // The payout protocol (ops/payout.ts). Every call after beginPayout is fenced by the hold.
  /** Takes the payout lock of a chain and network: one unfinished payout at a time. */
  beginPayout(q: {
    chain: Chain;
    network: string;
    nowMs: number;
    leaseMs: number;
  }): Promise<BeginPayoutResult>;
  /** The unfinished payout of a chain and network, if any (read only). */
  unfinishedPayout(chain: Chain, network: string): Promise<Payout | null>;
  payout(id: string): Promise<Payout | null>;
  /** Extends (or with a past time, gives up) the lease of an unfinished payout; false if fenced off. */
  renewPayout(hold: PayoutHold, leaseUntilMs: number, nowMs: number): Promise<boolean>;
  /**
   * Moves every pending payable of these recipients to 'paying' in this 'open' payout and
   * returns what the payout now holds per recipient; null if fenced off.
   */
  assignToPayout(
    hold: PayoutHold,
    q: { recipients: string[]; nowMs: number },
  ): Promise<RecipientDue[] | null>;
  /** 'open' → 'sent': records the signed transaction BEFORE it is broadcast; false if fenced off. */
  recordPayoutSent(
    hold: PayoutHold,
    sent: { tx: string; txBytes: string; txExpiry: string | null; nowMs: number },
  ): Promise<boolean>;
  /** The transaction landed and moved the money: its payables 'paid', the payout 'paid'. Null if fenced off. */
  settlePayout(hold: PayoutHold, nowMs: number): Promise<{ paid: number } | null>;
  /** The money did not move and cannot: payables back to 'pending', the payout 'failed'. Null if fenced off. */
  failPayout(hold: PayoutHold, error: string, nowMs: number): Promise<{ released: number } | null>;
}

// ---------------------------------------------------------------------------
// Refunds of undelivered payments, paid back by the operator (issue 13;
// docs/operations-refunds.md). The refund protocol mirrors the payout protocol.

/**
 * 'open': begun (the payment can no longer be claimed), no transaction recorded;
 * 'sent': the signed transaction is recorded and may be on-chain; 'refunded': final.
 */
export type RefundState = 'open' | 'sent' | 'refunded';

export interface Refund extends FencedTransfer {
  id: string;
  redemptionId: string;
  chain: Chain;
  network: string;
  /** The payer, paid back `amount` (the gross it paid), atomic units. */
  recipient: string;
  amount: bigint;
  /**
   * The provider's share it had already received on-chain (a v1 split, or a v2 payable
   * already paid out): refunded from the platform's funds, owed back by the provider.
   */
  providerKept: bigint;
  /** The pending payable (a v2 payment's provider share) this refund cancelled, if any. */
  payableId: string | null;
  state: RefundState;
  refundedAtMs: number | null;
}

export type RefundHold = FencedHold;

/** A payment as the refund command sees it. */
export interface RefundCandidate {
  id: string;
  chain: Chain;
  network: string;
  txId: string;
  payer: string;
  state: Redemption['state'];
  refundState: string | null;
  leaseUntilMs: number;
  /** Gross paid and the platform's fee, atomic units. */
  amount: bigint;
  fee: bigint;
  projectId: string | null;
  endpointId: string | null;
  /** 1: a split payment (X-PAYMENT); 2: paid whole to the platform (PAYMENT-SIGNATURE). */
  x402Version: 1 | 2;
  createdAtMs: number;
}

export type RefundRefusal =
  | 'not_found'
  | 'delivered'
  /** Not undelivered long enough yet (TOLLGATE_UNDELIVERED_AFTER_SEC). */
  | 'in_window'
  /** A paid attempt holds a live lease: it may still deliver. */
  | 'leased'
  /** The provider's share is in an unfinished payout: refund after the payout ends. */
  | 'payout_in_progress';

export type BeginRefundResult =
  /** The payment is marked refunding and this caller holds the new refund. */
  | { kind: 'begun'; refund: Refund }
  /** An unfinished refund whose lease lapsed (a crash), now held by this caller: resolve it. */
  | { kind: 'recover'; refund: Refund }
  /** Another run holds this refund until `refund.leaseUntilMs`. */
  | { kind: 'busy'; refund: Refund }
  | { kind: 'refunded'; refund: Refund }
  | { kind: 'refused'; reason: RefundRefusal };

export interface RefundRepo {
  /** Payments not delivered, not being refunded, created before `createdBeforeMs`; oldest first. */
  undelivered(q: {
    createdBeforeMs: number;
    chain?: Chain;
    network?: string;
    limit: number;
  }): Promise<RefundCandidate[]>;
  candidate(redemptionId: string): Promise<RefundCandidate | null>;
  /**
   * Begins (or takes over) the refund of one payment. Beginning is one transaction whose
   * first statement marks the redemption refunding only if it is not delivered, has no
   * refund mark, was created before `undeliveredBeforeMs` and nobody holds a live lease;
   * claim() and complete() require no mark, so a refund and a delivery exclude each other
   * across processes. The same transaction cancels the provider's pending payable.
   */
  begin(q: {
    redemptionId: string;
    nowMs: number;
    undeliveredBeforeMs: number;
    leaseMs: number;
  }): Promise<BeginRefundResult>;
  byRedemption(redemptionId: string): Promise<Refund | null>;
  /** Refunds not finished ('open', 'sent'), oldest first. */
  unfinished(q: { chain?: Chain; network?: string }): Promise<Refund[]>;
  /** Extends (or with a past time, gives up) the lease; false if fenced off. */
  renew(hold: RefundHold, leaseUntilMs: number, nowMs: number): Promise<boolean>;
  /** 'open' → 'sent': records the signed transaction BEFORE it is broadcast; false if fenced off. */
  recordSent(
    hold: RefundHold,
    sent: { tx: string; txBytes: string; txExpiry: string | null; nowMs: number },
  ): Promise<boolean>;
  /** The transaction landed: the refund and the redemption 'refunded', in one transaction. */
  finish(hold: RefundHold, nowMs: number): Promise<boolean>;
  /**
   * The money did not move and cannot (or nothing was sent): back to 'open' without a
   * transaction, lease given up, `error` kept; the next run signs afresh.
   */
  reopen(hold: RefundHold, error: string, nowMs: number): Promise<boolean>;
  /** Gives up the lease keeping the state (a 'sent' refund whose fate is unknown), with `error`. */
  release(hold: RefundHold, error: string, nowMs: number): Promise<boolean>;
}

// ---------------------------------------------------------------------------
// Payment read models (issue 13): earnings and payment lists over redemptions, read only.

/** One payment as the read models see it (a redemption with what it sold). */
export interface PaymentRecord {
  id: string;
  chain: Chain;
  network: string;
  txId: string;
  payer: string;
  requirementId: string;
  state: Redemption['state'];
  projectId: string | null;
  /** The project's slug now; null for inference or a deleted project. */
  projectSlug: string | null;
  endpointId: string | null;
  /** Method and path of the endpoint now; null for inference or a deleted endpoint. */
  endpoint: { id: string; method: string; path: string } | null;
  /** What was priced: `ep:<id>`, `inf:chat:<model>`, `inf:embeddings:<model>`, `inf:conv:<id>`. */
  subject: string | null;
  /** 1 (X-PAYMENT, split) or 2 (PAYMENT-SIGNATURE, exact). */
  x402Version: 1 | 2;
  /** Gross and fee, atomic units. */
  amount: bigint;
  fee: bigint;
  replays: number;
  refundState: string | null;
  createdAtMs: number;
  deliveredAtMs: number | null;
}

/** Statuses a list can be filtered by: payments/payment-status.ts defines them (PaymentStatus). */
export type PaymentStatusFilter =
  /** Answered once. */
  | 'delivered'
  /** Answered, and the stored answer served again at least once. */
  | 'replayed'
  /** Not answered yet (in flight or released after a failure): the payer may retry with the same payment. */
  | 'retryable'
  /** Still not answered `undeliveredAfterMs` after it was paid: refundable (the payer may still retry until a refund begins). */
  | 'undelivered'
  /** The operator began or finished paying it back: it can no longer be claimed. */
  | 'refunding'
  | 'refunded';

/** Whose payments: one project's, one payer's (on one chain), or every payment (operator). */
export type PaymentScope = { projectId: string } | { payer: Owner } | { all: true };

export interface PaymentListQuery {
  scope: PaymentScope;
  /** created_at in [fromMs, toMs). */
  fromMs: number;
  toMs: number;
  status?: PaymentStatusFilter;
  /** With `undeliveredAfterMs`, decides retryable vs undelivered exactly as paymentStatus does. */
  nowMs: number;
  undeliveredAfterMs: number;
  /** Keyset: the last payment of the previous page (newest first). */
  after?: { createdAtMs: number; id: string };
  limit: number;
}

export type EarningsGroup = 'day' | 'endpoint' | 'chain';

export interface EarningsFigures {
  chain: Chain;
  requests: number;
  gross: bigint;
  fee: bigint;
}

export interface EarningsRow extends EarningsFigures {
  /** Day: the UTC date, YYYY-MM-DD; endpoint: the endpoint id ('' if none); chain: the chain. */
  key: string;
}

export interface PaymentReadRepo {
  /**
   * Delivered (and replayed) payments of a project with created_at in [fromMs, toMs):
   * exact totals per chain, and rows per (group key, chain) ordered by key then chain.
   */
  earnings(q: {
    projectId: string;
    fromMs: number;
    toMs: number;
    groupBy: EarningsGroup;
  }): Promise<{ totals: EarningsFigures[]; rows: EarningsRow[] }>;
  /** Payments newest first (created_at desc, id desc), at most `limit` (bounded to 1..1000). */
  list(q: PaymentListQuery): Promise<PaymentRecord[]>;
  /** Method and path of endpoints by id (one query); unknown ids are absent. */
  endpointLabels(ids: string[]): Promise<{ id: string; method: string; path: string }[]>;
}

// ---------------------------------------------------------------------------
// The ledger as the reconciliation reads it (ops/reconcile.ts; docs/operations-reconcile.md).

/** A redemption with what was quoted for it (`meta`: splits, price, fee, x402Version). */
export interface LedgerRedemption {
  id: string;
  chain: Chain;
  network: string;
  txId: string;
  nonce: string;
  payer: string;
  state: Redemption['state'];
  createdAtMs: number;
  projectId: string | null;
  endpointId: string | null;
  /** Gross and fee columns, atomic units (null only on a row no migration could fill). */
  amount: bigint | null;
  fee: bigint | null;
  refundState: string | null;
  /** The stored `meta` JSON text, as written when the payment was claimed. */
  meta: string;
}

export interface LedgerRepo {
  /** Redemptions with created_at in [fromMs, toMs), oldest first (created_at, id), after a key. */
  redemptions(q: {
    fromMs: number;
    toMs: number;
    chain?: Chain;
    after?: { createdAtMs: number; id: string };
    limit: number;
  }): Promise<LedgerRedemption[]>;
  /** Payouts that recorded a transaction, created in [fromMs, toMs), oldest first. */
  payouts(q: { fromMs: number; toMs: number; chain?: Chain }): Promise<Payout[]>;
}

export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  projects: ProjectRepo;
  apis: ApiRepo;
  endpoints: EndpointRepo;
  rails: RailRepo;
  redemptions: RedemptionRepo;
  auth: AuthRepo;
  conversations: ConversationRepo;
  payables: PayableRepo;
  ledger: LedgerRepo;
  refunds: RefundRepo;
  paymentReads: PaymentReadRepo;
  /** Cheap liveness query for /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
