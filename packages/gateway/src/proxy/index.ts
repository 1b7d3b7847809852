export { type AddressCategory, addressCategory, isPublicAddress } from './address-policy.ts';
export {
  createForwarder,
  type Forwarder,
  type ForwarderOptions,
  type ForwardRequest,
  type ForwardResult,
  type Relay,
  type RelaySink,
  readCapped,
} from './forward.ts';
export {
  buildRequestHeaders,
  type ClientHeaders,
  filterResponseHeaders,
  type OriginAuth,
  type ResponseHeaders,
} from './forward-headers.ts';
export { buildTarget, parseBase } from './forward-target.ts';
export { createGuardedConnector, type GuardedConnectorOptions } from './guarded-connect.ts';
export {
  type CheckOriginOptions,
  type CheckOriginResult,
  checkOriginUrl,
  type OriginRejection,
  type ResolveHost,
  systemResolve,
} from './origin-url.ts';
export {
  BLOCKED_ADDRESS_CODE,
  BlockedAddressError,
  CLIENT_ABORTED_CODE,
  classifyUpstreamError,
  RESPONSE_TOO_LARGE_CODE,
  toUpstreamError,
  UPSTREAM_TIMEOUT_CODE,
  UpstreamError,
  type UpstreamFailure,
} from './upstream-error.ts';
