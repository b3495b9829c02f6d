/**
 * Would a password cross the network in clear? OPC UA protects a user name token either with
 * the secure channel (SignAndEncrypt) or by encrypting the password itself with the security
 * policy of the endpoint's user token policy (or, when that names none, the channel's). On a
 * channel that does not encrypt (None, Sign) with a token policy of None, node-opcua sends the
 * password as plain UTF-8, and it does so without a word. This module tells beforehand, from
 * the endpoint description, choosing the user token policy the way node-opcua 2.182 does
 * (findUserTokenPolicy in node-opcua-client's opcua_client_impl.js).
 */
import {
  type EndpointDescription,
  MessageSecurityMode,
  SecurityPolicy,
  type UserTokenPolicy,
  UserTokenType,
} from 'node-opcua';

/** node-opcua's ranking of security policies, weakest first (Basic256 ranks below None). */
const ranking: readonly string[] = [
  SecurityPolicy.Basic128Rsa15,
  SecurityPolicy.Basic192Rsa15,
  SecurityPolicy.Basic256,
  SecurityPolicy.None,
  SecurityPolicy.Basic128,
  SecurityPolicy.Basic192,
  SecurityPolicy.Basic256Rsa15,
  SecurityPolicy.Basic256Sha256,
  SecurityPolicy.Aes128_Sha256_RsaOaep,
  SecurityPolicy.Aes256_Sha256_RsaPss,
];

/** Policies node-opcua skips when the server offers others (broken on current Node). */
const deprecated = new Set<string>([SecurityPolicy.Basic128Rsa15, SecurityPolicy.Basic128]);

/** The security policy URIs node-opcua knows; any other text counts as "none given". */
const known = new Set<string>(
  Object.values(SecurityPolicy).filter((uri) => uri !== SecurityPolicy.Invalid),
);

/** The user name token policy node-opcua picks for an endpoint, undefined when it has none. */
export function userNamePolicy(endpoint: EndpointDescription): UserTokenPolicy | undefined {
  let policies = (endpoint.userIdentityTokens ?? []).filter(
    (policy) => policy.tokenType === UserTokenType.UserName,
  );
  if (policies.length > 1) {
    policies = policies.filter((policy) => !deprecated.has(policy.securityPolicyUri ?? ''));
  }
  if (policies.length > 1) {
    if (endpoint.securityMode === MessageSecurityMode.SignAndEncrypt) {
      const unencrypted = policies.find(
        (policy) => !policy.securityPolicyUri || policy.securityPolicyUri === SecurityPolicy.None,
      );
      if (unencrypted) return unencrypted;
    }
    // The strongest first; a policy that names none last.
    policies = [...policies].sort((a, b) => {
      const uriA = a.securityPolicyUri ?? '';
      const uriB = b.securityPolicyUri ?? '';
      if (uriA === uriB) return 0;
      if (!uriA) return 1;
      if (!uriB) return -1;
      return ranking.indexOf(uriB) - ranking.indexOf(uriA);
    });
  }
  return policies[0];
}

/**
 * Why a password given for this endpoint would travel in clear, in words; undefined when it
 * would not (the channel encrypts, or the password is encrypted for the server), or when the
 * endpoint takes no user name at all (the session then fails on its own).
 */
export function clearPasswordReason(endpoint: EndpointDescription): string | undefined {
  if (endpoint.securityMode === MessageSecurityMode.SignAndEncrypt) return undefined;
  const policy = userNamePolicy(endpoint);
  if (policy === undefined) return undefined;
  const channel = MessageSecurityMode[endpoint.securityMode] ?? String(endpoint.securityMode);
  const uri = policy.securityPolicyUri ?? '';
  // A token policy that names no (known) policy falls back to the channel's.
  const effective = known.has(uri) ? uri : (endpoint.securityPolicyUri ?? '');
  if (effective === SecurityPolicy.None || effective === '') {
    return (
      `the server's user token policy '${policy.policyId ?? ''}' does not encrypt the password ` +
      `and the channel (securityMode ${channel}) does not either`
    );
  }
  if (!endpoint.serverCertificate || endpoint.serverCertificate.length === 0) {
    return `the server has no certificate to encrypt the password with (securityMode ${channel})`;
  }
  return undefined;
}
