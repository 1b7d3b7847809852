/**
 * Row types as both backends return them. Where the drivers disagree the read type
 * is the union and the mappers in rows.ts normalize: pg returns BIGINT as a string
 * and booleans as booleans, node:sqlite returns integers and 0/1.
 */
import type { ColumnType } from 'kysely';

/** BIGINT (pg: string) or INTEGER (sqlite: number); written as a number. */
type Ms = ColumnType<number | string, number, number>;
type Bool = ColumnType<boolean | number, boolean, boolean>;
/** JSON kept as text in both backends. */
type JsonText = string;

export interface ProjectsTable {
  id: string;
  slug: string;
  name: string;
  description: string;
  category: string;
  owner_chain: string;
  owner_address: string;
  x402_exact: ColumnType<boolean | number, boolean | undefined, boolean>;
  created_at: string;
  updated_at: string;
}

export interface ApisTable {
  id: string;
  project_id: string;
  name: string;
  base_url: string;
  auth_type: string;
  auth_name: string | null;
  auth_secret_enc: string | null;
  auth_secret_last4: string | null;
  created_at: string;
  updated_at: string;
}

export interface EndpointsTable {
  id: string;
  project_id: string;
  api_id: string;
  method: string;
  path: string;
  /** Atomic units; TEXT in sqlite, BIGINT in pg; both read back as a decimal string. */
  price: ColumnType<string | number, string, string>;
  endpoint_type: string;
  description: string;
  timeout_ms: number;
  enabled: Bool;
  input_schema: JsonText | null;
  output_schema: JsonText | null;
  created_at: string;
  updated_at: string;
}

export interface RailsTable {
  project_id: string;
  chain: string;
  network: string;
  provider_recipient: string;
  updated_at: string;
}

export interface RedemptionsTable {
  id: string;
  chain: string;
  network: string;
  tx_id: string;
  nonce: string;
  request_hash: string;
  requirement_id: string;
  payer: string;
  state: string;
  attempt: number;
  lease_until_ms: Ms;
  response_status: number | null;
  response_headers: JsonText | null;
  response_body: Uint8Array | null;
  meta: JsonText;
  created_at_ms: Ms;
  delivered_at_ms: ColumnType<number | string | null, number | null, number | null>;
  failures: ColumnType<number, number | undefined, number>;
  retry_at_ms: ColumnType<number | string, number | undefined, number>;
  /** The project and endpoint sold; null for inference. */
  project_id: string | null;
  endpoint_id: string | null;
  /** Gross paid and platform fee, atomic units (TEXT in sqlite, BIGINT in pg). */
  amount: ColumnType<string | number | null, string | null, string | null>;
  fee: ColumnType<string | number | null, string | null, string | null>;
  /** Answers served again from the stored response. */
  replays: ColumnType<number, number | undefined, number>;
  /** Set once a refund of this undelivered payment has begun; the payment can no longer be claimed. */
  refund_state: string | null;
}

export interface AuthChallengesTable {
  nonce: string;
  chain: string;
  address: string;
  message: string;
  issued_at_ms: Ms;
  expires_at_ms: Ms;
  used: Bool;
}

export interface SessionsTable {
  token_hash: string;
  owner_chain: string;
  owner_address: string;
  created_at_ms: Ms;
  expires_at_ms: Ms;
  revoked: Bool;
}

export interface ConversationsTable {
  id: string;
  owner_chain: string;
  owner_address: string;
  title: string;
  model: string | null;
  metadata: JsonText;
  created_at: string;
  updated_at: string;
}

export interface ConversationItemsTable {
  id: string;
  conversation_id: string;
  seq: number;
  role: string;
  content: string;
  redemption_id: string | null;
  usage: JsonText | null;
  created_at: string;
}

export interface PayablesTable {
  id: string;
  redemption_id: string;
  project_id: string;
  chain: string;
  network: string;
  recipient: string;
  /** Atomic units; TEXT in sqlite, BIGINT in pg. */
  amount: ColumnType<string | number, string, string>;
  created_at_ms: Ms;
  state: string;
  payout_id: string | null;
  payout_tx: string | null;
  paid_at_ms: ColumnType<number | string | null, number | null, number | null>;
}

/** The lease, fence and recorded transaction of a platform-wallet transfer (payouts, refunds). */
export interface FencedTransferColumns {
  state: string;
  attempt: number;
  lease_until_ms: Ms;
  tx: string | null;
  tx_bytes: string | null;
  tx_expiry: string | null;
  error: string | null;
  created_at_ms: Ms;
  updated_at_ms: Ms;
}

export interface PayoutsTable extends FencedTransferColumns {
  id: string;
  chain: string;
  network: string;
}

export interface RefundsTable extends FencedTransferColumns {
  id: string;
  redemption_id: string;
  chain: string;
  network: string;
  recipient: string;
  /** Atomic units; TEXT in sqlite, BIGINT in pg. */
  amount: ColumnType<string | number, string, string>;
  provider_kept: ColumnType<string | number, string, string>;
  payable_id: string | null;
  refunded_at_ms: ColumnType<number | string | null, number | null, number | null>;
}

export interface Database {
  projects: ProjectsTable;
  apis: ApisTable;
  endpoints: EndpointsTable;
  rails: RailsTable;
  redemptions: RedemptionsTable;
  auth_challenges: AuthChallengesTable;
  sessions: SessionsTable;
  conversations: ConversationsTable;
  conversation_items: ConversationItemsTable;
  payables: PayablesTable;
  payouts: PayoutsTable;
  refunds: RefundsTable;
}
