/**
 * Registration-time origin check (DESIGN §4.9) using the proxy's checker, so
 * registration and dialing apply one address policy. The stored form is the
 * parsed URL without trailing slashes, which is what the forwarder joins onto.
 */
import type { Deps } from '../deps.ts';
import { checkOriginUrl } from '../proxy/origin-url.ts';
import { invalid } from './rules.ts';

const REASON_TEXT: Record<string, string> = {
  invalid_url: 'baseUrl is not a valid absolute URL',
  scheme_not_allowed: 'baseUrl must use https',
  userinfo_not_allowed: 'baseUrl must not contain a user name or password',
  fragment_not_allowed: 'baseUrl must not contain a #fragment',
  query_not_allowed: 'baseUrl must not contain a query string (use origin auth of type "query")',
  private_address: 'baseUrl must point to a public internet address',
  unresolvable_host: 'the host of baseUrl does not resolve',
};

export async function checkedBaseUrl(deps: Deps, raw: string): Promise<string> {
  const result = await checkOriginUrl(raw, { allowPrivate: deps.config.allowPrivateOrigins });
  if (!result.ok) {
    throw invalid(REASON_TEXT[result.reason] ?? 'baseUrl is not allowed', result.reason, {
      ...(result.detail ? { detail: result.detail } : {}),
    });
  }
  return result.url.href.replace(/\/+$/, '');
}
